#ifndef SEARCHLIGHT_TOKEN_OFFERS_H
#define SEARCHLIGHT_TOKEN_OFFERS_H

#include "term_collector.h"

typedef struct sqlite3 sqlite3;

// Token streams a writer prepared on another thread and offers to the connection's FTS5 tokenizer for
// the row it is about to insert (see token_offers.c).
typedef struct TokenOffer {
    char *text;               // a copy of the text the stream was made from
    int length;
    unsigned char *stream;    // the stream (searchlight_prepare_tokens' format)
    int streamLength;
    int textCapacity, streamCapacity;
    int used;
} TokenOffer;

enum { SEARCHLIGHT_MAXIMUM_OFFERS = 8 };

// What a connection's tokenizer instances share: the tokenizer's user data, freed by SQLite.
typedef struct TokenizerShared {
    TermCollector *terms;
    int pausesTerms;          // a bulk export refreshes the term table from the vocabulary at its end instead
    // Replacing an item's text (searchlight_replacing_terms): its old row's terms, recorded while FTS5
    // deletes it, are in the term table already; its new row's terms are collected only when not among them.
    int replacing;            // 0, SEARCHLIGHT_TERMS_OLD_ROW or SEARCHLIGHT_TERMS_NEW_ROW
    TermCollector *oldTerms;
    TokenOffer offers[SEARCHLIGHT_MAXIMUM_OFFERS];
    int offerCount;
    // Term leader lists (searchlight_watch_terms): the terms that have one, and those of them a document
    // written or deleted since the last drain held, whose lists no longer describe the index. A prefix's
    // list is watched as the prefix followed by `*`; the longest watched prefix bounds the checks per token.
    TermCollector *watched;
    int longestWatchedPrefix;
    TermCollector *touched;
    int touchedAll;
    long long watchGeneration;
} TokenizerShared;

/// One record of a token stream: a token's flags, byte range and normalized bytes. On the wire: colocated,
/// start, end and length as four native ints, then the bytes (searchlight_prepare_tokens writes it).
typedef struct TokenRecord {
    int colocated, start, end, length;
    const char *token;
} TokenRecord;

enum { TOKEN_RECORD_HEADER = 4 * (int)sizeof(int) };

/// Reads the record at `*at` and moves past it: 1, 0 at the stream's end, -1 when it is damaged.
int token_stream_next(const unsigned char *stream, int length, int *at, TokenRecord *record);

TokenizerShared *tokenizer_shared_new(void);
/// The shared state registered with a connection's tokenizer; NULL when it is not registered.
TokenizerShared *tokenizer_shared_of(sqlite3 *db);
void tokenizer_shared_free(void *shared);
/// Notes a document's token for the term leader lists: touched when watched. Returns SQLITE_OK.
int tokenizer_shared_note_token(TokenizerShared *shared, const char *token, int length);
/// The unused offer made from exactly this text, marked used; NULL when there is none.
TokenOffer *token_offers_take(TokenizerShared *shared, const char *text, int length);

#endif
