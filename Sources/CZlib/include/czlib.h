#ifndef SEARCHLIGHT_CZLIB_H
#define SEARCHLIGHT_CZLIB_H

#include <stddef.h>
#include <stdint.h>

/// Result codes of the raw-DEFLATE helpers.
enum {
    CZLIB_OK = 0,
    CZLIB_DATA_ERROR = -1,   // input is not a valid raw DEFLATE stream
    CZLIB_MEMORY_ERROR = -2, // allocation failed or the output would exceed the limit
};

/// Inflates a raw DEFLATE stream (no zlib or gzip header, window bits -15).
/// On success `*output` is a malloc'ed buffer the caller frees, `*outputLength` its size.
int czlib_raw_inflate(const uint8_t *input, size_t inputLength, size_t maxOutputLength,
                      uint8_t **output, size_t *outputLength);

/// Inflates a gzip stream (the Corpus's .tsv.gz files). Same contract as czlib_raw_inflate.
int czlib_gzip_inflate(const uint8_t *input, size_t inputLength, size_t maxOutputLength,
                       uint8_t **output, size_t *outputLength);

/// Deflates bytes into a raw DEFLATE stream (best compression), as Core Data writes Z_MODELCACHE.
int czlib_raw_deflate(const uint8_t *input, size_t inputLength, uint8_t **output, size_t *outputLength);

#endif
