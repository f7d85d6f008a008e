#ifndef SEARCHLIGHT_TOKEN_OFFERS_H
#define SEARCHLIGHT_TOKEN_OFFERS_H

#include "term_collector.h"

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
    TokenOffer offers[SEARCHLIGHT_MAXIMUM_OFFERS];
    int offerCount;
} TokenizerShared;

TokenizerShared *tokenizer_shared_new(void);
void tokenizer_shared_free(void *shared);
/// The unused offer made from exactly this text, marked used; NULL when there is none.
TokenOffer *token_offers_take(TokenizerShared *shared, const char *text, int length);

#endif
