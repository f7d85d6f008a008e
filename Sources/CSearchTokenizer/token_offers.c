#include "token_offers.h"
#include "fts5_api.h"
#include "search_tokenizer.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// A first export's writing thread is the bottleneck, and ICU segmentation is a large part of its work.
// The producer thread tokenizes each item's texts ahead (searchlight_prepare_tokens); the writer offers
// the streams to its connection just before the FTS5 insert, and the tokenizer replays a stream instead
// of segmenting when the text FTS5 hands it is byte-for-byte the text the stream was made from. Any other
// text (a delete's old values, a 'rebuild', an offer that does not match) is tokenized as always, so the
// index is the same with or without offers.
//
// The offers live in the tokenizer's user data: one set per connection, used only by the thread that
// runs that connection's statements, one statement at a time.

TokenizerShared *tokenizer_shared_new(void) {
    TokenizerShared *shared = calloc(1, sizeof(TokenizerShared));
    if (!shared) return NULL;
    shared->terms = term_collector_new();
    shared->oldTerms = term_collector_new();
    shared->watched = term_collector_new_any();
    shared->touched = term_collector_new_any();
    shared->watchGeneration = -1;
    if (!shared->terms || !shared->oldTerms || !shared->watched || !shared->touched) { tokenizer_shared_free(shared); return NULL; }
    return shared;
}

void tokenizer_shared_free(void *pointer) {
    TokenizerShared *shared = pointer;
    if (!shared) return;
    term_collector_free(shared->terms);
    term_collector_free(shared->oldTerms);
    term_collector_free(shared->watched);
    term_collector_free(shared->touched);
    for (int i = 0; i < SEARCHLIGHT_MAXIMUM_OFFERS; i++) {
        free(shared->offers[i].text);
        free(shared->offers[i].stream);
    }
    free(shared);
}

TokenOffer *token_offers_take(TokenizerShared *shared, const char *text, int length) {
    if (!shared) return NULL;
    for (int i = 0; i < shared->offerCount; i++) {
        TokenOffer *offer = &shared->offers[i];
        if (!offer->used && offer->length == length && (length == 0 || memcmp(offer->text, text, (size_t)length) == 0)) {
            offer->used = 1;
            return offer;
        }
    }
    return NULL;
}

TokenizerShared *tokenizer_shared_of(sqlite3 *db) {
    fts5_api *api = NULL;
    if (searchlight_fts5_api(db, &api) != SQLITE_OK) return NULL;
    void *user = NULL;
    fts5_tokenizer methods;
    if (api->xFindTokenizer(api, SEARCHLIGHT_TOKENIZER_NAME, &user, &methods) != SQLITE_OK) return NULL;
    return user;
}

void *searchlight_token_offers(sqlite3 *db) { return tokenizer_shared_of(db); }

int token_stream_next(const unsigned char *stream, int length, int *at, TokenRecord *record) {
    if (*at > length - TOKEN_RECORD_HEADER) return 0;
    int header[4];
    memcpy(header, stream + *at, sizeof header);
    if (header[3] < 0 || header[3] > length - *at - TOKEN_RECORD_HEADER) return -1;
    *record = (TokenRecord){ header[0], header[1], header[2], header[3], (const char *)stream + *at + TOKEN_RECORD_HEADER };
    *at += TOKEN_RECORD_HEADER + header[3];
    return 1;
}

static int grow(void **buffer, int *capacity, int needed) {
    if (needed <= *capacity) return 1;
    if (needed > (INT_MAX - 64) / 2) return 0;
    int size = needed * 2 + 64;
    void *grown = realloc(*buffer, (size_t)size);
    if (!grown) return 0;
    *buffer = grown;
    *capacity = size;
    return 1;
}

int searchlight_offer_tokens(void *offers, const char *text, int length, const unsigned char *stream, int streamLength) {
    TokenizerShared *shared = offers;
    if (!shared || length < 0 || streamLength < 0) return SQLITE_MISUSE;
    if (shared->offerCount >= SEARCHLIGHT_MAXIMUM_OFFERS) return SQLITE_FULL;
    TokenOffer *offer = &shared->offers[shared->offerCount];
    if (!grow((void **)&offer->text, &offer->textCapacity, length) || !grow((void **)&offer->stream, &offer->streamCapacity, streamLength)) {
        return SQLITE_NOMEM;
    }
    if (length) memcpy(offer->text, text, (size_t)length);
    if (streamLength) memcpy(offer->stream, stream, (size_t)streamLength);
    offer->length = length;
    offer->streamLength = streamLength;
    offer->used = 0;
    shared->offerCount++;
    return SQLITE_OK;
}

void searchlight_pause_terms(void *offers, int paused) {
    TokenizerShared *shared = offers;
    if (shared) shared->pausesTerms = paused;
}

void searchlight_replacing_terms(void *offers, int stage) {
    TokenizerShared *shared = offers;
    if (!shared) return;
    if (stage == SEARCHLIGHT_TERMS_OLD_ROW || stage == 0) term_collector_reset(shared->oldTerms);
    shared->replacing = stage == SEARCHLIGHT_TERMS_OLD_ROW || stage == SEARCHLIGHT_TERMS_NEW_ROW ? stage : 0;
}

void searchlight_withdraw_tokens(void *offers) {
    TokenizerShared *shared = offers;
    if (shared) shared->offerCount = 0;
}

int searchlight_stream_value_positions(const unsigned char *stream, int streamLength, const int *valueStarts, int valueCount, int *counts) {
    for (int i = 0; i < valueCount; i++) counts[i] = 0;
    int value = 0, at = 0, status;
    TokenRecord record;
    while ((status = token_stream_next(stream, streamLength, &at, &record)) == 1) {
        if (record.colocated) continue;  // an identifier's part shares its word's position
        // Tokens come in the order of their starts: the value only ever moves forward.
        while (value + 1 < valueCount && valueStarts[value + 1] <= record.start) value++;
        if (valueCount > 0) counts[value]++;
    }
    return status;
}

int searchlight_stream_tokens(const unsigned char *stream, int streamLength, void *context, searchlight_token_callback callback) {
    int at = 0, status;
    TokenRecord record;
    while ((status = token_stream_next(stream, streamLength, &at, &record)) == 1) {
        int stop = callback(context, record.token, record.length, record.start, record.end, record.colocated);
        if (stop) return stop;
    }
    return status;
}

// MARK: Term leaders

// A term's leader list (the items that score best for it alone, kept by the index) describes the index
// only while no document holding the term is written or deleted. The tokenizer sees every such document:
// it notes the watched terms they hold, and the writer marks those lists stale before its transaction
// commits (searchlight_drain_touched).

long long searchlight_watch_generation(void *offers) {
    TokenizerShared *shared = offers;
    return shared ? shared->watchGeneration : -1;
}

void searchlight_watch_reset(void *offers, long long generation) {
    TokenizerShared *shared = offers;
    if (!shared) return;
    term_collector_reset(shared->watched);
    shared->longestWatchedPrefix = 0;
    shared->watchGeneration = generation;
}

int searchlight_watch_term(void *offers, const char *term, int length) {
    TokenizerShared *shared = offers;
    if (!shared || length < 0) return SQLITE_MISUSE;
    if (length > 1 && term[length - 1] == '*') {
        int prefix = length - 1;
        // Tokens are checked against their prefixes up to the longest listed length only: a longer one
        // could not be watched, and a set that cannot watch every list watches none.
        if (prefix > SEARCHLIGHT_LONGEST_LISTED_PREFIX) {
            shared->watched->overflowed = 1;
            shared->watchGeneration = -1;
            return SQLITE_OK;
        }
        if (prefix > shared->longestWatchedPrefix) shared->longestWatchedPrefix = prefix;
    }
    int rc = term_collector_add(shared->watched, term, length);
    // A set that could not keep every term cannot tell which lists a write leaves true: none are.
    if (rc != SQLITE_OK || shared->watched->overflowed) shared->watchGeneration = -1;
    return rc;
}

void searchlight_touch_all(void *offers) {
    TokenizerShared *shared = offers;
    if (shared) shared->touchedAll = 1;
}

int searchlight_touch_stream(void *offers, const unsigned char *stream, int length) {
    TokenizerShared *shared = offers;
    if (!shared) return 0;
    TokenRecord record;
    int at = 0, status;
    while ((status = token_stream_next(stream, length, &at, &record)) == 1) tokenizer_shared_note_token(shared, record.token, record.length);
    if (status < 0) { shared->touchedAll = 1; return -1; }
    return 0;
}

static void touch(TokenizerShared *shared, const char *key, int length) {
    if (term_collector_add(shared->touched, key, length) != SQLITE_OK || shared->touched->overflowed) shared->touchedAll = 1;
}

int tokenizer_shared_note_token(TokenizerShared *shared, const char *token, int length) {
    if (!shared || shared->touchedAll) return SQLITE_OK;
    // A set that overflowed was emptied: it no longer tells which lists a document touches, so all are.
    if (shared->watched->overflowed) { shared->touchedAll = 1; return SQLITE_OK; }
    if (shared->watched->count == 0) return SQLITE_OK;
    if (term_collector_contains(shared->watched, token, length)) touch(shared, token, length);
    // The prefixes' lists: every prefix of the token that ends between two scalars (a typed prefix is
    // whole characters), the token itself included, as `prefix*`.
    int longest = shared->longestWatchedPrefix < length ? shared->longestWatchedPrefix : length;
    char key[SEARCHLIGHT_LONGEST_LISTED_PREFIX + 1];
    for (int prefix = 1; prefix <= longest && !shared->touchedAll; prefix++) {
        if (prefix < length && ((unsigned char)token[prefix] & 0xC0) == 0x80) continue;
        memcpy(key, token, (size_t)prefix);
        key[prefix] = '*';
        if (term_collector_contains(shared->watched, key, prefix + 1)) touch(shared, key, prefix + 1);
    }
    return SQLITE_OK;
}

int searchlight_drain_touched(void *offers, void *context, searchlight_term_callback callback) {
    TokenizerShared *shared = offers;
    if (!shared) return 1;
    int all = shared->touchedAll, result = 0;
    TermCollector *touched = shared->touched;
    for (int i = 0; i < touched->capacity && !all && result == 0; i++) {
        if (touched->slots[i]) result = callback(context, touched->slots[i], (int)strlen(touched->slots[i]));
    }
    term_collector_reset(touched);
    shared->touchedAll = 0;
    return all ? 1 : result == 0 ? 0 : -1;
}
