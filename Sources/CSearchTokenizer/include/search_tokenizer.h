#ifndef SEARCHLIGHT_SEARCH_TOKENIZER_H
#define SEARCHLIGHT_SEARCH_TOKENIZER_H

// Plain C types only: Swift modules that import Foundation must never see ICU's headers
// (see shared/reference/swift-on-linux.md), and sqlite3 stays an opaque forward declaration.
typedef struct sqlite3 sqlite3;

/// The name the tokenizer is registered under: `tokenize='searchlight'`.
#define SEARCHLIGHT_TOKENIZER_NAME "searchlight"

/// Registers the `searchlight` FTS5 tokenizer on a connection. Returns an SQLite result code.
int searchlight_register_tokenizer(sqlite3 *db);

/// Registers the `searchlight_rank(fts, weights…)` FTS5 function: BM25F, each column normalized by its
/// own length. Returns minus the score (lower is better), like bm25. Returns an SQLite result code.
int searchlight_register_rank(sqlite3 *db);

/// Receives one token: its normalized UTF-8 bytes, the byte range it came from in the input, and
/// whether it is a part of the previous token (an identifier's part, at the same position).
typedef int (*searchlight_token_callback)(void *context, const char *token, int token_length, int start, int end, int colocated);

/// Tokenizes UTF-8 text exactly as the FTS5 tokenizer does (word segmentation for every script,
/// case folding, compatibility and width normalization, diacritic removal). Invalid UTF-8 is read as
/// U+FFFD. With `withParts`, each identifier word is followed by its parts, as documents are indexed.
/// Stops early when the callback returns non-zero and returns that value; 0 otherwise, or -1 when ICU fails.
int searchlight_tokenize(const char *text, int length, int withParts, void *context, searchlight_token_callback callback);

/// The number of token positions FTS5 gives the text (words; identifier parts share their word's
/// position), without building the tokens. -1 when ICU fails.
int searchlight_token_count(const char *text, int length);

#endif
