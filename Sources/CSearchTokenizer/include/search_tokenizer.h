#ifndef SEARCHLIGHT_SEARCH_TOKENIZER_H
#define SEARCHLIGHT_SEARCH_TOKENIZER_H

// Plain C types only: Swift modules that import Foundation must never see ICU's headers
// (see shared/reference/swift-on-linux.md), and sqlite3 stays an opaque forward declaration.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

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

/// Terms shorter than this many scalars never take part in typo tolerance (a 5-letter word with one
/// edit matches 4-letter terms at the shortest), so the term table leaves them out.
#define SEARCHLIGHT_TYPO_MINIMUM_TERM 4

/// What each edit of a typo match subtracts from a `searchlight_rank` score: more than any score
/// reaches, so rows matched as typed rank first, then those with one edit, then two.
#define SEARCHLIGHT_TYPO_PENALTY 1e7

/// Receives one term; returns non-zero to stop.
typedef int (*searchlight_term_callback)(void *context, const char *term, int length);

/// Hands over, in order, the distinct terms (of SEARCHLIGHT_TYPO_MINIMUM_TERM scalars or more) that the
/// connection's tokenizer produced for documents since the last call, and forgets them. Returns 0, 1 when
/// there were too many to keep (none are passed: read the vocabulary instead), or -1 on failure.
int searchlight_drain_terms(sqlite3 *db, void *context, searchlight_term_callback callback);

/// A sorted array of row ids, bound to a statement as a pointer for `searchlight_in_ids(rowid, ?)`.
/// The caller keeps the array and this struct alive while the statement runs.
typedef struct searchlight_id_set {
    const long long *ids;
    long count;
} searchlight_id_set;

/// The pointer type `searchlight_in_ids` accepts (SQLite's pointer-passing interface).
#define SEARCHLIGHT_ID_SET_TYPE "searchlight_id_set"

/// Registers `searchlight_in_ids(rowid, ids)`: 1 when rowid is in the bound id set. Returns an SQLite
/// result code.
int searchlight_register_id_set(sqlite3 *db);

/// Binds an id set to parameter `index` of a statement. Returns an SQLite result code.
int searchlight_bind_id_set(sqlite3_stmt *statement, int index, const searchlight_id_set *set);

#endif
