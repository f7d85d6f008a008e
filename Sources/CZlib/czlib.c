#include "czlib.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static int inflate_with(int windowBits, const uint8_t *input, size_t inputLength, size_t maxOutputLength,
                        uint8_t **output, size_t *outputLength) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, windowBits) != Z_OK) return CZLIB_MEMORY_ERROR;

    // One byte beyond the limit tells "exactly the limit" (allowed, even 0) from "more" (refused).
    size_t ceiling = maxOutputLength + 1;
    size_t capacity = inputLength * 4 + 1024;
    if (capacity > ceiling) capacity = ceiling;
    uint8_t *buffer = malloc(capacity);
    if (!buffer) { inflateEnd(&stream); return CZLIB_MEMORY_ERROR; }

    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)inputLength;
    size_t produced = 0;
    int status = Z_OK;
    while (status != Z_STREAM_END) {
        if (produced > maxOutputLength) { free(buffer); inflateEnd(&stream); return CZLIB_MEMORY_ERROR; }
        if (produced == capacity) {
            size_t grown = capacity * 2 > ceiling ? ceiling : capacity * 2;
            uint8_t *bigger = realloc(buffer, grown);
            if (!bigger) { free(buffer); inflateEnd(&stream); return CZLIB_MEMORY_ERROR; }
            buffer = bigger;
            capacity = grown;
        }
        stream.next_out = buffer + produced;
        stream.avail_out = (uInt)(capacity - produced);
        status = inflate(&stream, Z_NO_FLUSH);
        produced = capacity - stream.avail_out;
        if (status == Z_BUF_ERROR && stream.avail_in == 0) status = Z_DATA_ERROR; // truncated input
        if (status != Z_OK && status != Z_STREAM_END) { free(buffer); inflateEnd(&stream); return CZLIB_DATA_ERROR; }
    }
    inflateEnd(&stream);
    if (produced > maxOutputLength) { free(buffer); return CZLIB_MEMORY_ERROR; }
    *output = buffer;
    *outputLength = produced;
    return CZLIB_OK;
}

int czlib_raw_inflate(const uint8_t *input, size_t inputLength, size_t maxOutputLength,
                      uint8_t **output, size_t *outputLength) {
    return inflate_with(-15, input, inputLength, maxOutputLength, output, outputLength);
}

int czlib_gzip_inflate(const uint8_t *input, size_t inputLength, size_t maxOutputLength,
                       uint8_t **output, size_t *outputLength) {
    return inflate_with(16 + 15, input, inputLength, maxOutputLength, output, outputLength);
}

int czlib_raw_deflate(const uint8_t *input, size_t inputLength, uint8_t **output, size_t *outputLength) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return CZLIB_MEMORY_ERROR;
    size_t capacity = deflateBound(&stream, (uLong)inputLength);
    uint8_t *buffer = malloc(capacity);
    if (!buffer) { deflateEnd(&stream); return CZLIB_MEMORY_ERROR; }
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)inputLength;
    stream.next_out = buffer;
    stream.avail_out = (uInt)capacity;
    int status = deflate(&stream, Z_FINISH);
    if (status != Z_STREAM_END) { free(buffer); deflateEnd(&stream); return CZLIB_MEMORY_ERROR; }
    *outputLength = capacity - stream.avail_out;
    *output = buffer;
    deflateEnd(&stream);
    return CZLIB_OK;
}
