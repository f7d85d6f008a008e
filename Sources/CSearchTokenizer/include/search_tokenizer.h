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

/// Tokenizes UTF-8 text as FTS5 tokenizes a document (words and identifiers' parts) into a stream for
/// `searchlight_offer_tokens`, on any thread. Writes at most `capacity` bytes and returns the stream's
/// full length: when that exceeds `capacity`, call again with a buffer that large. -1 when ICU fails.
int searchlight_prepare_tokens(const char *text, int length, unsigned char *buffer, int capacity);

/// The stream of `text` — values joined by U+001F — made from the stream of `reference`, another such list
/// that shares most of its values (an item's old text and its new one): a shared value's tokens are copied,
/// moved to where the value stands in `text`, and only the other values are tokenized. Returns as
/// `searchlight_prepare_tokens` does, and -2 when the splice cannot be trusted (the caller then tokenizes
/// `text` whole). ICU breaks words on both sides of the separator, so each value's tokens depend on that
/// value alone — except after a zero-width joiner (U+200D) that follows the separator: it attaches to it
/// (UAX #29 WB4) and joins the pictograph after it (WB3c), and one that is also a letter (ℹ, Ⓜ, 🅰) carries
/// the word on, so a text or reference holding U+200D gives -2.
int searchlight_prepare_tokens_sharing(const char *text, int length, const char *reference, int referenceLength,
                                       const unsigned char *referenceStream, int referenceStreamLength,
                                       unsigned char *buffer, int capacity);

/// The connection's token offers, for `searchlight_offer_tokens`; NULL when the tokenizer is not
/// registered on it. Valid as long as the connection.
void *searchlight_token_offers(sqlite3 *db);

/// Offers a prepared stream to the connection's tokenizer: while offered, a document whose text is
/// byte-for-byte `text` takes its tokens from the stream instead of being segmented (once). Both are
/// copied. At most 8 offers at once; returns an SQLite result code.
int searchlight_offer_tokens(void *offers, const char *text, int length, const unsigned char *stream, int streamLength);

/// Pauses (non-zero) or resumes collecting the terms of documents for `searchlight_drain_terms`: a bulk
/// export, which refreshes the term table from the vocabulary at its end, has no use for them.
void searchlight_pause_terms(void *offers, int paused);

/// Stages of replacing one item's text, for the typo term table: SEARCHLIGHT_TERMS_OLD_ROW before FTS5
/// deletes the old row (its terms are recorded, not collected: the table has them since that row was
/// written), SEARCHLIGHT_TERMS_NEW_ROW before it inserts the new one (only terms the old row lacked are
/// collected), 0 after (every document's terms are collected again). A renamed country's places hand the
/// table a few new words each instead of all their words twice. Deleting a row under OLD_ROW, then 0,
/// collects nothing of it.
#define SEARCHLIGHT_TERMS_OLD_ROW 1
#define SEARCHLIGHT_TERMS_NEW_ROW 2
void searchlight_replacing_terms(void *offers, int stage);

/// Withdraws every offer (used or not).
void searchlight_withdraw_tokens(void *offers);

/// The term leader lists the connection's tokenizer watches for: the generation of the index's lists it
/// was last given (-1: none, or a set it could not keep whole).
long long searchlight_watch_generation(void *offers);
/// Forgets the watched terms; the terms added next are those of lists at `generation`.
void searchlight_watch_reset(void *offers, long long generation);
/// Watches one more term: a document written or deleted while it is watched touches its list. A term
/// ending in `*` is a prefix's list: a document token starting with the bytes before the star touches it.
int searchlight_watch_term(void *offers, const char *term, int length);
/// The longest prefix, in bytes, a leader list may be kept for: a document's tokens are checked against
/// each of their prefixes up to this length.
#define SEARCHLIGHT_LONGEST_LISTED_PREFIX 32
/// Touches every list: a write that changes scores without FTS5 seeing it (an item's static rank).
void searchlight_touch_all(void *offers);
/// Touches the lists of a document's tokens as if it were written (a token stream in
/// searchlight_prepare_tokens' format): a write FTS5 does not see that moves what a list keeps of its rows
/// (an item's place, which placed lists hold). Returns 0, or -1 when the stream is damaged (every list is
/// touched then).
int searchlight_touch_stream(void *offers, const unsigned char *stream, int length);

/// For a text of values joined by U+001F whose stream this is, the positions each value holds: its
/// words, identifier parts sharing their word's. `valueStarts` are the byte offsets where the values
/// begin. Returns 0, or -1 when the stream is damaged.
int searchlight_stream_value_positions(const unsigned char *stream, int streamLength, const int *valueStarts, int valueCount, int *counts);

/// Hands a prepared stream's tokens to `callback` in order, as `searchlight_tokenize` with parts would give
/// them: another index can store exactly what FTS5 stores without segmenting the text again. Returns 0,
/// the callback's non-zero value when it stops early, or -1 when the stream is damaged.
int searchlight_stream_tokens(const unsigned char *stream, int streamLength, void *context, searchlight_token_callback callback);
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

/// Hands over the watched terms that documents written or deleted since the last call held, and forgets
/// them. Returns 0, 1 when every list is touched (none are passed), or -1 when the callback stopped.
int searchlight_drain_touched(void *offers, void *context, searchlight_term_callback callback);

/// The text columns a score weighs: display name, title, text, keywords.
#define SEARCHLIGHT_RANK_COLUMNS 4

/// One occurrence of a query phrase in a row: the phrase (in the query's numbering), the column, and the
/// token position within the column where it starts.
typedef struct searchlight_instance {
    int phrase;
    int column;
    int offset;
} searchlight_instance;

/// What a whole-value match scores at least: above every partial match (see searchlight_scorer_score).
#define SEARCHLIGHT_WHOLE_VALUE_SCORE 1000.0

/// The ranking's IDF of a phrase held by `documents` of `rows` rows: BM25's, floored at 1e-6.
double searchlight_idf(double documents, long long rows);

/// The most a partial match of a row of this static rank scores per unit of IDF (k1 + 1 times its rank
/// factor): what top-k pruning bounds a row by.
double searchlight_partial_ceiling(double rank);

/// Searchlight's relevance for one query (BM25F per value, whole-value matches first, static rank, typo
/// penalties): what `searchlight_rank` computes inside FTS5, for any index that can list a row's phrase
/// instances. Not thread-safe: one query, one thread.
typedef struct searchlight_scorer searchlight_scorer;

/// A scorer for a query of `phraseCount` phrases: each phrase's size in tokens and the rows holding it
/// (its document frequency), the rows in all, each column's average length in tokens, and the phrase
/// plan (`group:edits` per phrase, `-` for an excluded one, `x` for one that only steers which rows FTS5
/// visits and never counts; NULL: every phrase exact, its own group). A
/// phrase's entry may end in `@documents` (`0:1@408720`): searchlight_rank then takes that count instead of
/// counting the phrase's rows; the scorer reads its counts from `documentFrequencies` only.
/// NULL when memory runs out.
searchlight_scorer *searchlight_scorer_create(int phraseCount, const int *phraseSizes, const double *documentFrequencies,
                                              long long rows, const double *averages, const char *plan);

/// Frees a scorer.
void searchlight_scorer_free(searchlight_scorer *scorer);

/// Scores a row (higher is better) into `result` from its instances ordered by column, then offset; its
/// column sizes (`sized`: read from the current value-lengths format); its value lengths
/// (`"D T|3 1 2|1 1"`); its static rank; and the four column weights. Returns an SQLite result code.
int searchlight_scorer_score(searchlight_scorer *scorer, const searchlight_instance *instances, int instanceCount,
                             const int *sizes, int sized, const char *lengths, double rank, const double *weights, double *result);

/// Reads the four column sizes from value lengths in the current format; 1 when they were read, 0 when
/// they are missing, in the first format, or implausible.
int searchlight_value_lengths_sizes(const char *lengths, int *sizes);

/// A sorted array of row ids, bound to a statement as a pointer for `searchlight_in_ids(rowid, ?)`.
/// The caller keeps the array and this struct alive while the statement runs.
typedef struct searchlight_id_set {
    const long long *ids;
    long count;
} searchlight_id_set;

/// The pointer type `searchlight_in_ids` accepts (SQLite's pointer-passing interface).
#define SEARCHLIGHT_ID_SET_TYPE "searchlight_id_set"

/// Registers `searchlight_in_ids(rowid, ids)`: 1 when rowid is in the bound id set; and
/// `searchlight_placed(latitude, longitude, placement)`: 1 when the bound placement keeps the place.
/// Returns an SQLite result code.
int searchlight_register_id_set(sqlite3 *db);

/// Binds an id set to parameter `index` of a statement. Returns an SQLite result code.
int searchlight_bind_id_set(sqlite3_stmt *statement, int index, const searchlight_id_set *set);

/// A search's place filters, bound to a statement as a pointer for `searchlight_placed(latitude,
/// longitude, ?)`: `contains` answers for a place (`located` 0 when the item has none) by calling back
/// the search's own test, so that SQL keeps exactly the hits the search would keep.
typedef struct searchlight_placement {
    void *context;
    int (*contains)(void *context, double latitude, double longitude, int located);
} searchlight_placement;

/// The pointer type `searchlight_placed` accepts.
#define SEARCHLIGHT_PLACEMENT_TYPE "searchlight_placement"

/// Binds a placement to parameter `index` of a statement. Returns an SQLite result code.
int searchlight_bind_placement(sqlite3_stmt *statement, int index, const searchlight_placement *placement);

/// Writes an item's term vector — its four FTS5 columns' tokens (display name, title, text, keywords), each
/// token's bytes and whether it is colocated — from the columns' prepared streams (NULL: an empty column).
/// Writes at most `capacity` bytes and returns the vector's full length (call again with that much room
/// when it is larger), or -1 when a stream is damaged.
int searchlight_term_vector(const unsigned char *const *streams, const int *streamLengths, unsigned char *buffer, int capacity);

/// A query matched and scored against rows' term vectors, as FTS5 would match and `searchlight_rank` score
/// them (see `searchlight_vector_rank`).
typedef struct searchlight_vector_query searchlight_vector_query;

/// The pointer type `searchlight_vector_rank` accepts.
#define SEARCHLIGHT_VECTOR_QUERY_TYPE "searchlight_vector_query"

/// A query scored by `scorer` (taken: freed with the query, or at once when creation fails) with the four
/// column weights. `fallbackSQL` scores one row with FTS5 — parameters: the phrase plan, the MATCH
/// `expression`, the row id; one row of one column, minus the score — for a row whose vector cannot tell
/// (no vector, a damaged one, a prefix's count that FTS5's merge order decides). NULL when memory runs out.
searchlight_vector_query *searchlight_vector_query_create(searchlight_scorer *scorer, const double *weights, const char *fallbackSQL,
                                                          const char *expression, const char *plan);

/// Adds the query's next phrase, in FTS5's numbering: its group (-1 for an excluded phrase), whether its
/// last token is a prefix, and its tokens as FTS5 tokenizes the phrase. Returns an SQLite result code.
int searchlight_vector_query_add_phrase(searchlight_vector_query *query, int group, int isPrefix, int tokenCount,
                                        const unsigned char *const *tokens, const int *lengths);

/// Frees a query.
void searchlight_vector_query_free(searchlight_vector_query *query);

/// Matches and scores one row: 1 with `score` (higher is better) when it matches, 0 when not, 2 when its
/// vector cannot tell (FTS5 must), -1 when memory runs out.
int searchlight_vector_query_score(searchlight_vector_query *query, const unsigned char *vector, int length, const char *lengths,
                                   double rank, double *score);

/// The most rows one query asks FTS5 to score; past them `searchlight_vector_rank` fails with
/// SEARCHLIGHT_VECTOR_FALLBACK_LIMIT as its message, and the search takes a plan that runs FTS5 once.
#define SEARCHLIGHT_VECTOR_FALLBACKS 16
#define SEARCHLIGHT_VECTOR_FALLBACK_LIMIT "searchlight_vector_rank: too many rows for FTS5 to score one by one"

/// Binds a query to parameter `index` of a statement. Returns an SQLite result code.
int searchlight_bind_vector_query(sqlite3_stmt *statement, int index, searchlight_vector_query *query);

/// Words whose typo neighbours `searchlight_typo_near` looks for in term vectors.
typedef struct searchlight_typo_words searchlight_typo_words;

/// The pointer type `searchlight_typo_near` accepts.
#define SEARCHLIGHT_TYPO_WORDS_TYPE "searchlight_typo_words"

/// An empty set of words; NULL when memory runs out.
searchlight_typo_words *searchlight_typo_words_create(void);
/// Adds a word (UTF-8, as the index holds terms), the edits it allows and whether it is typed as a prefix.
int searchlight_typo_words_add(searchlight_typo_words *words, const char *word, int length, int edits, int isPrefix);
/// Frees a set of words.
void searchlight_typo_words_free(searchlight_typo_words *words);
/// 1 when the vector holds a typo neighbour of some word (or is no vector: it may hold anything), 0 when
/// not, -1 when memory runs out.
int searchlight_typo_words_near(searchlight_typo_words *words, const unsigned char *vector, int length);

/// Binds words to parameter `index` of a statement. Returns an SQLite result code.
int searchlight_bind_typo_words(sqlite3_stmt *statement, int index, searchlight_typo_words *words);

/// Registers `searchlight_vector_rank(id, term_vector, value_lengths, rank, query)` — a row's relevance
/// from its term vector, minus, NULL when it does not match — and `searchlight_typo_near(term_vector,
/// words)`. Returns an SQLite result code.
int searchlight_register_term_vectors(sqlite3 *db);

#endif
