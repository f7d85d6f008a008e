#include "search_tokenizer.h"
#include "token_offers.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// Term vectors: each item's tokens as FTS5 indexed them, column by column, in the item's own row (Lucene
// keeps the same per-document record under that name). A place search whose circle holds a few thousand
// places checks and scores each of them from its vector, as PostgreSQL rechecks a row's tsvector after its
// GiST index: FTS5 would first merge the doclist of every term a prefix covers (`san*`, 1,782 terms) or
// walk a common word's doclist, whatever the circle holds.
//
// Format: a version byte (1), then per column (display name, title, text, keywords) a varint count of
// tokens and the tokens, each a varint of its length times two plus 1 when colocated (an identifier's
// part, at its word's position), then its bytes. Varints are LEB128, at most 5 bytes.

enum { VECTOR_FORMAT = 1, MAXIMUM_VARINT_BYTES = 5 };

static int put_varint(unsigned char *out, unsigned int value) {
    int count = 0;
    do {
        unsigned char byte = value & 0x7F;
        value >>= 7;
        if (out) out[count] = byte | (value ? 0x80 : 0);
        count++;
    } while (value);
    return count;
}

// Reads a varint at *at below `length`; 0 when the vector ends or the varint is too long.
static int get_varint(const unsigned char *vector, int length, int *at, unsigned int *value) {
    unsigned int result = 0;
    for (int shift = 0, count = 0; count < MAXIMUM_VARINT_BYTES; count++, shift += 7) {
        if (*at >= length) return 0;
        unsigned char byte = vector[(*at)++];
        result |= (unsigned int)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) { *value = result; return 1; }
    }
    return 0;
}

int searchlight_term_vector(const unsigned char *const *streams, const int *streamLengths, unsigned char *buffer, int capacity) {
    long long needed = 1;
    for (int pass = 0; pass < 2; pass++) {
        unsigned char *out = pass == 1 ? buffer : NULL;
        if (pass == 1) {
            if (needed > capacity || !buffer) return needed > INT_MAX ? -1 : (int)needed;
            out[0] = VECTOR_FORMAT;
        }
        long long at = 1;
        for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) {
            const unsigned char *stream = streams[column];
            int streamLength = streams[column] ? streamLengths[column] : 0, position = 0, status;
            unsigned int count = 0;
            TokenRecord record;
            while ((status = token_stream_next(stream, streamLength, &position, &record)) == 1) count++;
            if (status < 0) return -1;
            at += put_varint(out ? out + at : NULL, count);
            position = 0;
            while (token_stream_next(stream, streamLength, &position, &record) == 1) {
                at += put_varint(out ? out + at : NULL, (unsigned int)record.length * 2 + (record.colocated ? 1 : 0));
                if (out) memcpy(out + at, record.token, (size_t)record.length);
                at += record.length;
                if (at > INT_MAX) return -1;
            }
        }
        needed = at;
    }
    return (int)needed;
}

// MARK: Reading a vector

// One token of a row: its bytes in the vector, its column and position.
typedef struct VectorToken {
    const char *bytes;
    int length, column, position;
} VectorToken;

// A row's tokens in column order, positions rising within a column; columnStart[c] is the first token
// of column c (columnStart[4] the end), columnSize[c] its positions (FTS5's docsize).
typedef struct VectorRow {
    VectorToken *tokens;
    int count, capacity;
    int columnStart[SEARCHLIGHT_RANK_COLUMNS + 1];
    int columnSize[SEARCHLIGHT_RANK_COLUMNS];
} VectorRow;

// Decodes a vector; 1 when read, 0 when it is not one (damaged, or another format), -1 without memory.
static int read_vector(VectorRow *row, const unsigned char *vector, int length) {
    row->count = 0;
    if (!vector || length < 1 || vector[0] != VECTOR_FORMAT) return 0;
    int at = 1;
    for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) {
        unsigned int count = 0;
        if (!get_varint(vector, length, &at, &count) || count > (unsigned int)(length - at)) return 0;
        row->columnStart[column] = row->count;
        // Bounded by the bytes left (count <= length), so the sum fits; its double need not: such a vector is
        // no vector this reader takes (FTS5 scores the row).
        if (row->count + (int)count > (INT_MAX - 16) / 2) return 0;
        if (row->count + (int)count > row->capacity) {
            int grown = (row->count + (int)count) * 2 + 16;
            VectorToken *bigger = realloc(row->tokens, (size_t)grown * sizeof(VectorToken));
            if (!bigger) return -1;
            row->tokens = bigger;
            row->capacity = grown;
        }
        int position = -1;
        for (unsigned int index = 0; index < count; index++) {
            unsigned int header = 0;
            if (!get_varint(vector, length, &at, &header)) return 0;
            unsigned int size = header >> 1;
            if (size > (unsigned int)(length - at)) return 0;
            // As FTS5 counts positions: a colocated token shares the previous one's, unless it is the column's first.
            if (!(header & 1) || position < 0) position++;
            row->tokens[row->count++] = (VectorToken){ (const char *)vector + at, (int)size, column, position };
            at += (int)size;
        }
        row->columnSize[column] = position + 1;
    }
    row->columnStart[SEARCHLIGHT_RANK_COLUMNS] = row->count;
    return at == length ? 1 : 0;
}

// MARK: Matching a query

typedef struct VectorPhrase {
    int group;          // -1: excluded
    int isPrefix;       // the last token is a prefix
    int tokenCount;
    char **tokens;
    int *lengths;
} VectorPhrase;

struct searchlight_vector_query {
    searchlight_scorer *scorer;
    double weights[SEARCHLIGHT_RANK_COLUMNS];
    VectorPhrase *phrases;
    int phraseCount, phraseCapacity, groupCount;
    // Scratch reused row after row: the row's tokens, its instances, the groups it matched.
    VectorRow row;
    searchlight_instance *instances;
    int instanceCount, instanceCapacity;
    // Per phrase token, its position list in the column at hand, and a cursor into it.
    int **lists, *listCapacity, *listLength, *listCursor, listsCount;
    // What asks FTS5 for a row the vector cannot score exactly (see searchlight_vector_query_create).
    char *fallbackSQL, *expression, *plan;
    sqlite3_stmt *fallback;
    // The last row scored: SQLite may evaluate the function twice on one row.
    sqlite3_int64 lastID;
    int hasLast, lastMatched;
    double lastScore;
    int fallbacks;
};

static char *copy_string(const char *text) {
    if (!text) return NULL;
    size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (copy) memcpy(copy, text, length + 1);
    return copy;
}

searchlight_vector_query *searchlight_vector_query_create(searchlight_scorer *scorer, const double *weights, const char *fallbackSQL,
                                                          const char *expression, const char *plan) {
    searchlight_vector_query *query = calloc(1, sizeof(searchlight_vector_query));
    if (!query) { searchlight_scorer_free(scorer); return NULL; }
    query->scorer = scorer;
    for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) query->weights[column] = weights ? weights[column] : 1.0;
    query->fallbackSQL = copy_string(fallbackSQL);
    query->expression = copy_string(expression);
    query->plan = copy_string(plan);
    if (!scorer || (fallbackSQL && !query->fallbackSQL) || (expression && !query->expression) || (plan && !query->plan)) {
        searchlight_vector_query_free(query);
        return NULL;
    }
    return query;
}

void searchlight_vector_query_free(searchlight_vector_query *query) {
    if (!query) return;
    searchlight_scorer_free(query->scorer);
    for (int p = 0; p < query->phraseCount; p++) {
        for (int t = 0; t < query->phrases[p].tokenCount; t++) free(query->phrases[p].tokens[t]);
        free(query->phrases[p].tokens);
        free(query->phrases[p].lengths);
    }
    free(query->phrases);
    free(query->row.tokens);
    free(query->instances);
    for (int k = 0; k < query->listsCount; k++) free(query->lists[k]);
    free(query->lists);
    free(query->listCapacity);
    free(query->listLength);
    free(query->listCursor);
    free(query->fallbackSQL);
    free(query->expression);
    free(query->plan);
    sqlite3_finalize(query->fallback);
    free(query);
}

int searchlight_vector_query_add_phrase(searchlight_vector_query *query, int group, int isPrefix, int tokenCount,
                                        const unsigned char *const *tokens, const int *lengths) {
    if (!query || tokenCount < 0 || group < -1 || group > 63) return SQLITE_MISUSE;
    if (query->phraseCount == query->phraseCapacity) {
        int grown = query->phraseCapacity * 2 + 8;
        VectorPhrase *bigger = realloc(query->phrases, (size_t)grown * sizeof(VectorPhrase));
        if (!bigger) return SQLITE_NOMEM;
        query->phrases = bigger;
        query->phraseCapacity = grown;
    }
    VectorPhrase *phrase = &query->phrases[query->phraseCount];
    *phrase = (VectorPhrase){ group, isPrefix != 0, 0, calloc((size_t)tokenCount + 1, sizeof(char *)), calloc((size_t)tokenCount + 1, sizeof(int)) };
    query->phraseCount++;  // counted now, so that free() releases what was made
    if (!phrase->tokens || !phrase->lengths) return SQLITE_NOMEM;
    for (int t = 0; t < tokenCount; t++) {
        if (lengths[t] < 0) return SQLITE_MISUSE;
        phrase->tokens[t] = malloc((size_t)lengths[t] + 1);
        if (!phrase->tokens[t]) return SQLITE_NOMEM;
        memcpy(phrase->tokens[t], tokens[t], (size_t)lengths[t]);
        phrase->lengths[t] = lengths[t];
        phrase->tokenCount++;
    }
    if (group + 1 > query->groupCount) query->groupCount = group + 1;
    return SQLITE_OK;
}

static int token_matches(const VectorToken *token, const VectorPhrase *phrase, int index) {
    int length = phrase->lengths[index];
    int prefix = phrase->isPrefix && index == phrase->tokenCount - 1;
    if (prefix ? token->length < length : token->length != length) return 0;
    return memcmp(token->bytes, phrase->tokens[index], (size_t)length) == 0;
}

static int add_instance(searchlight_vector_query *query, int phrase, int column, int offset) {
    if (query->instanceCount == query->instanceCapacity) {
        if (query->instanceCapacity > (INT_MAX - 32) / 2) return 0;
        int grown = query->instanceCapacity * 2 + 32;
        searchlight_instance *bigger = realloc(query->instances, (size_t)grown * sizeof(searchlight_instance));
        if (!bigger) return 0;
        query->instances = bigger;
        query->instanceCapacity = grown;
    }
    query->instances[query->instanceCount++] = (searchlight_instance){ phrase, column, offset };
    return 1;
}

static int by_column_then_offset(const void *a, const void *b) {
    const searchlight_instance *x = a, *y = b;
    if (x->column != y->column) return x->column < y->column ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->phrase < y->phrase ? -1 : x->phrase > y->phrase;
}

// The position list FTS5 keeps for the phrase's token `index` in a column's tokens [start, end): a word's
// every occurrence (a word twice at one position, `a.a` and its parts, is there twice); a prefix's positions
// once each, as FTS5 merges the lists of the terms it covers — but when one of those terms stands twice at a
// position, how often the merge keeps the position depends on the order of its merges: 0 then (the row is
// left to FTS5). Positions rise; *count is the list's length. 1 when made, -1 without memory.
static int position_list(searchlight_vector_query *query, const VectorPhrase *phrase, int index, int start, int end, int **list, int *count) {
    const VectorRow *row = &query->row;
    int isPrefix = phrase->isPrefix && index == phrase->tokenCount - 1;
    *count = 0;
    for (int i = start; i < end; i++) {
        const VectorToken *token = &row->tokens[i];
        if (!token_matches(token, phrase, index)) continue;
        if (isPrefix && *count > 0 && (*list)[*count - 1] == token->position) {
            // Another term at this position: the same one twice leaves the count to FTS5.
            for (int j = i - 1; j >= start && row->tokens[j].position == token->position; j--) {
                if (row->tokens[j].length == token->length && memcmp(row->tokens[j].bytes, token->bytes, (size_t)token->length) == 0
                    && token_matches(&row->tokens[j], phrase, index)) return 0;
            }
            continue;
        }
        if (*count == query->listCapacity[index]) {
            if (query->listCapacity[index] > (INT_MAX - 16) / 2) return -1;
            int grown = query->listCapacity[index] * 2 + 16;
            int *bigger = realloc(query->lists[index], (size_t)grown * sizeof(int));
            if (!bigger) return -1;
            query->lists[index] = bigger;
            query->listCapacity[index] = grown;
            *list = bigger;
        }
        (*list)[(*count)++] = token->position;
    }
    return 1;
}

// A phrase's instances in one column, as FTS5 finds them (fts5ExprPhraseIsMatch): its tokens' position
// lists walked in step, each match moving every list on by one entry, so that a word repeated at a position
// matches as often as FTS5's lists repeat it. 1 when done (*found when some instance), 2 when FTS5 must
// tell, -1 without memory.
static int column_instances(searchlight_vector_query *query, int number, int column, int *found) {
    const VectorPhrase *phrase = &query->phrases[number];
    int start = query->row.columnStart[column], end = query->row.columnStart[column + 1];
    int terms = phrase->tokenCount;
    *found = 0;
    if (terms == 0 || start == end) return 1;
    if (terms > query->listsCount) {
        int **lists = realloc(query->lists, (size_t)terms * sizeof(int *));
        if (!lists) return -1;
        query->lists = lists;
        int *capacities = realloc(query->listCapacity, (size_t)terms * sizeof(int));
        if (!capacities) return -1;
        query->listCapacity = capacities;
        int *lengths = realloc(query->listLength, (size_t)terms * sizeof(int));
        if (!lengths) return -1;
        query->listLength = lengths;
        int *cursors = realloc(query->listCursor, (size_t)terms * sizeof(int));
        if (!cursors) return -1;
        query->listCursor = cursors;
        for (int k = query->listsCount; k < terms; k++) { lists[k] = NULL; capacities[k] = 0; }
        query->listsCount = terms;
    }
    for (int k = 0; k < terms; k++) {
        int status = position_list(query, phrase, k, start, end, &query->lists[k], &query->listLength[k]);
        if (status != 1) return status == 0 ? 2 : -1;
        if (query->listLength[k] == 0) return 1;
        query->listCursor[k] = 0;
    }
    int *const *lists = query->lists;
    const int *lengths = query->listLength;
    int *at = query->listCursor;
    for (;;) {
        int position = lists[0][at[0]], matched;
        do {
            matched = 1;
            for (int k = 0; k < terms; k++) {
                int wanted = position + k;
                if (lists[k][at[k]] == wanted) continue;
                matched = 0;
                while (lists[k][at[k]] < wanted) if (++at[k] == lengths[k]) return 1;
                if (lists[k][at[k]] > wanted) position = lists[k][at[k]] - k;
            }
        } while (!matched);
        if (!add_instance(query, number, column, position)) return -1;
        *found = 1;
        for (int k = 0; k < terms; k++) if (++at[k] == lengths[k]) return 1;
    }
}

int searchlight_vector_query_score(searchlight_vector_query *query, const unsigned char *vector, int length, const char *lengths,
                                   double rank, double *score) {
    if (!query) return -1;
    int read = read_vector(&query->row, vector, length);
    if (read < 0) return -1;
    if (read == 0) return 2;
    query->instanceCount = 0;
    unsigned long long matched = 0;
    for (int number = 0; number < query->phraseCount; number++) {
        int group = query->phrases[number].group;
        for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) {
            int found = 0, status = column_instances(query, number, column, &found);
            if (status != 1) return status;
            if (!found) continue;
            if (group < 0) return 0;  // an excluded phrase is present
            matched |= 1ULL << group;
        }
    }
    for (int group = 0; group < query->groupCount; group++) {
        if (!(matched & (1ULL << group))) return 0;
    }
    qsort(query->instances, (size_t)query->instanceCount, sizeof(searchlight_instance), by_column_then_offset);
    int sizes[SEARCHLIGHT_RANK_COLUMNS];
    int sized = searchlight_value_lengths_sizes(lengths, sizes);
    if (!sized) for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) sizes[column] = query->row.columnSize[column];
    if (searchlight_scorer_score(query->scorer, query->instances, query->instanceCount, sizes, sized, lengths, rank,
                                 query->weights, score) != SQLITE_OK) return -1;
    return 1;
}

// The row's score from FTS5 itself (the query's fallback statement, run for this row id): 1 with the score
// when it matches, 0 when not; an SQLite error code, negated, otherwise.
static int fts5_score(sqlite3 *db, searchlight_vector_query *query, sqlite3_int64 id, double *score) {
    if (!query->fallbackSQL || !query->expression) return -SQLITE_MISUSE;
    if (!query->fallback) {
        int rc = sqlite3_prepare_v2(db, query->fallbackSQL, -1, &query->fallback, NULL);
        if (rc != SQLITE_OK) return -rc;
    }
    sqlite3_stmt *statement = query->fallback;
    sqlite3_reset(statement);
    sqlite3_bind_text(statement, 1, query->plan ? query->plan : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(statement, 2, query->expression, -1, SQLITE_STATIC);
    sqlite3_bind_int64(statement, 3, id);
    int rc = sqlite3_step(statement), found = 0;
    if (rc == SQLITE_ROW) {
        *score = -sqlite3_column_double(statement, 0);
        found = 1;
        rc = sqlite3_step(statement);
    }
    sqlite3_reset(statement);
    query->fallbacks++;
    return rc == SQLITE_DONE ? found : -(rc == SQLITE_ROW ? SQLITE_CORRUPT : rc);
}

// searchlight_vector_rank(id, term_vector, value_lengths, rank, query): the row's relevance, minus (as
// searchlight_rank), NULL when it does not match. A row its vector cannot score exactly (no vector, a
// damaged one, a prefix's count left to FTS5) is scored by FTS5 for its id.
static void searchlight_vector_rank(sqlite3_context *context, int argumentCount, sqlite3_value **arguments) {
    (void)argumentCount;
    searchlight_vector_query *query = sqlite3_value_pointer(arguments[4], SEARCHLIGHT_VECTOR_QUERY_TYPE);
    if (!query) { sqlite3_result_error(context, "searchlight_vector_rank: no query bound", -1); return; }
    sqlite3_int64 id = sqlite3_value_int64(arguments[0]);
    if (!(query->hasLast && query->lastID == id)) {
        const unsigned char *vector = sqlite3_value_type(arguments[1]) == SQLITE_BLOB ? sqlite3_value_blob(arguments[1]) : NULL;
        int length = vector ? sqlite3_value_bytes(arguments[1]) : 0;
        const char *lengths = (const char *)sqlite3_value_text(arguments[2]);
        double score = 0;
        int status = searchlight_vector_query_score(query, vector, length, lengths, sqlite3_value_double(arguments[3]), &score);
        if (status == 2) {
            // Each such row costs an FTS5 statement (a prefix merged again): past a few, the search is better
            // served by a plan that runs FTS5 once, and says so (SEARCHLIGHT_VECTOR_FALLBACK_LIMIT).
            if (query->fallbacks >= SEARCHLIGHT_VECTOR_FALLBACKS) {
                sqlite3_result_error(context, SEARCHLIGHT_VECTOR_FALLBACK_LIMIT, -1);
                return;
            }
            status = fts5_score(sqlite3_context_db_handle(context), query, id, &score);
            if (status < 0) { sqlite3_result_error_code(context, -status); return; }
        }
        if (status < 0) { sqlite3_result_error_nomem(context); return; }
        query->hasLast = 1;
        query->lastID = id;
        query->lastMatched = status == 1;
        query->lastScore = score;
    }
    if (query->lastMatched) sqlite3_result_double(context, -query->lastScore); else sqlite3_result_null(context);
}

// MARK: Typo neighbours

struct searchlight_typo_words {
    int count, capacity;
    // Each word's scalars, and the UTF-8 bytes of its first scalar: a token not starting with them is no
    // neighbour (the walk never takes the first letter for a typo), told apart without decoding it.
    struct TypoWord { unsigned int *scalars; int length, edits, isPrefix; unsigned char first[4]; int firstLength; } *words;
    unsigned int *scratch;  // a token's scalars
    int *rows;              // three DP rows
    int scratchCapacity;
};

searchlight_typo_words *searchlight_typo_words_create(void) { return calloc(1, sizeof(searchlight_typo_words)); }

void searchlight_typo_words_free(searchlight_typo_words *words) {
    if (!words) return;
    for (int i = 0; i < words->count; i++) free(words->words[i].scalars);
    free(words->words);
    free(words->scratch);
    free(words->rows);
    free(words);
}

// Decodes UTF-8 into scalars (invalid bytes as U+FFFD); returns how many, at most `capacity`.
static int decode_scalars(const unsigned char *bytes, int length, unsigned int *scalars, int capacity) {
    int count = 0;
    for (int at = 0; at < length && count < capacity;) {
        unsigned char lead = bytes[at];
        int size = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
        unsigned int scalar = size == 1 ? lead : size == 2 ? lead & 0x1F : size == 3 ? lead & 0x0F : lead & 0x07;
        int valid = size > 0 && at + size <= length;
        for (int i = 1; valid && i < size; i++) {
            if ((bytes[at + i] & 0xC0) != 0x80) valid = 0; else scalar = scalar << 6 | (bytes[at + i] & 0x3F);
        }
        scalars[count++] = valid ? scalar : 0xFFFD;
        at += valid ? size : 1;
    }
    return count;
}

int searchlight_typo_words_add(searchlight_typo_words *words, const char *word, int length, int edits, int isPrefix) {
    if (!words || length < 0 || edits < 0) return SQLITE_MISUSE;
    if (words->count == words->capacity) {
        int grown = words->capacity * 2 + 4;
        struct TypoWord *bigger = realloc(words->words, (size_t)grown * sizeof(struct TypoWord));
        if (!bigger) return SQLITE_NOMEM;
        words->words = bigger;
        words->capacity = grown;
    }
    unsigned int *scalars = malloc(((size_t)length + 1) * sizeof(unsigned int));
    if (!scalars) return SQLITE_NOMEM;
    int count = decode_scalars((const unsigned char *)word, length, scalars, length + 1);
    struct TypoWord *entry = &words->words[words->count++];
    *entry = (struct TypoWord){ scalars, count, edits, isPrefix != 0, { 0 }, 0 };
    // The first scalar's bytes as the word holds them (a word that is not valid UTF-8 keeps none: it never
    // matches bytes, and the scalar comparison decides).
    unsigned int first = count > 0 ? scalars[0] : 0xFFFD;
    int size = first < 0x80 ? 1 : first < 0x800 ? 2 : first < 0x10000 ? 3 : 4;
    if (count > 0 && length >= size && first != 0xFFFD) {
        memcpy(entry->first, word, (size_t)size);
        entry->firstLength = size;
    }
    return SQLITE_OK;
}

// Whether `token` is a typo neighbour of the word, by the typo walk's rules (see TypoExpander): its first
// scalar the word's, within the word's edits by optimal string alignment (a transposition of neighbours is
// one edit), not the word itself; for a prefix, some prefix of the token is. A superset of what the walk
// finds among the terms a row holds: a row without a neighbour cannot match an expansion.
static int is_neighbour(searchlight_typo_words *words, const struct TypoWord *word, const unsigned int *token, int length) {
    int m = word->length, edits = word->edits;
    if (m == 0 || length == 0 || token[0] != word->scalars[0]) return 0;
    if (!word->isPrefix && (length > m + edits || length < m - edits)) return 0;
    int *previous = words->rows, *row = previous + (m + 1), *next = row + (m + 1);
    for (int j = 0; j <= m; j++) row[j] = j;
    for (int i = 1; i <= length; i++) {
        next[0] = i;
        int best = next[0];
        for (int j = 1; j <= m; j++) {
            int cost = token[i - 1] == word->scalars[j - 1] ? 0 : 1;
            int cell = row[j] + 1;
            if (next[j - 1] + 1 < cell) cell = next[j - 1] + 1;
            if (row[j - 1] + cost < cell) cell = row[j - 1] + cost;
            if (i > 1 && j > 1 && token[i - 1] == word->scalars[j - 2] && token[i - 2] == word->scalars[j - 1] && previous[j - 2] + 1 < cell) {
                cell = previous[j - 2] + 1;
            }
            next[j] = cell;
            if (cell < best) best = cell;
        }
        if (word->isPrefix && next[m] <= edits && !(i == m && memcmp(token, word->scalars, (size_t)m * sizeof(unsigned int)) == 0)) return 1;
        if (best > edits) return 0;
        int *spare = previous; previous = row; row = next; next = spare;
    }
    if (word->isPrefix) return 0;
    return row[m] <= edits && !(length == m && memcmp(token, word->scalars, (size_t)m * sizeof(unsigned int)) == 0);
}

int searchlight_typo_words_near(searchlight_typo_words *words, const unsigned char *vector, int length) {
    if (!words) return -1;
    // Read straight through (no token array): most tokens start otherwise than every word and are told
    // from their first bytes, never decoded.
    if (!vector || length < 1 || vector[0] != VECTOR_FORMAT) return 1;  // no vector: it may hold anything
    int longest = 0;
    for (int w = 0; w < words->count; w++) if (words->words[w].length > longest) longest = words->words[w].length;
    int at = 1;
    for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) {
        unsigned int count = 0;
        if (!get_varint(vector, length, &at, &count)) return 1;
        for (unsigned int index = 0; index < count; index++) {
            unsigned int header = 0;
            if (!get_varint(vector, length, &at, &header)) return 1;
            unsigned int size = header >> 1;
            if (size > (unsigned int)(length - at)) return 1;
            const unsigned char *token = vector + at;
            at += (int)size;
            int candidate = 0;
            for (int w = 0; w < words->count && !candidate; w++) {
                const struct TypoWord *word = &words->words[w];
                candidate = word->firstLength == 0
                    || ((int)size >= word->firstLength && token[0] == word->first[0] && memcmp(token, word->first, (size_t)word->firstLength) == 0);
            }
            if (!candidate) continue;
            // Every scalar takes a byte at least; a token's scalars are at most its bytes.
            if ((int)size + 1 > words->scratchCapacity || 3 * (longest + 1) > words->scratchCapacity) {
                // A token's size is bounded by the vector's bytes; its double need not fit.
                if ((int)size > (INT_MAX - 16) / 2 || longest > (INT_MAX - 16) / 8) return -1;
                int grown = ((int)size > 3 * (longest + 1) ? (int)size : 3 * (longest + 1)) * 2 + 16;
                unsigned int *scratch = realloc(words->scratch, (size_t)grown * sizeof(unsigned int));
                if (!scratch) return -1;
                words->scratch = scratch;
                int *rows = realloc(words->rows, (size_t)grown * sizeof(int));
                if (!rows) return -1;
                words->rows = rows;
                words->scratchCapacity = grown;
            }
            int scalars = decode_scalars(token, (int)size, words->scratch, words->scratchCapacity);
            for (int w = 0; w < words->count; w++) if (is_neighbour(words, &words->words[w], words->scratch, scalars)) return 1;
        }
    }
    return at == length ? 0 : 1;
}

// searchlight_typo_near(term_vector, words): 1 when the row holds a typo neighbour of one of the words (or
// its vector cannot tell), 0 otherwise.
static void searchlight_typo_near(sqlite3_context *context, int argumentCount, sqlite3_value **arguments) {
    (void)argumentCount;
    searchlight_typo_words *words = sqlite3_value_pointer(arguments[1], SEARCHLIGHT_TYPO_WORDS_TYPE);
    if (!words) { sqlite3_result_error(context, "searchlight_typo_near: no words bound", -1); return; }
    const unsigned char *vector = sqlite3_value_type(arguments[0]) == SQLITE_BLOB ? sqlite3_value_blob(arguments[0]) : NULL;
    int found = searchlight_typo_words_near(words, vector, vector ? sqlite3_value_bytes(arguments[0]) : 0);
    if (found < 0) { sqlite3_result_error_nomem(context); return; }
    sqlite3_result_int(context, found);
}

int searchlight_register_term_vectors(sqlite3 *db) {
    int rc = sqlite3_create_function_v2(db, "searchlight_vector_rank", 5, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                        searchlight_vector_rank, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_create_function_v2(db, "searchlight_typo_near", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                      searchlight_typo_near, NULL, NULL, NULL);
}

int searchlight_bind_vector_query(sqlite3_stmt *statement, int index, searchlight_vector_query *query) {
    return sqlite3_bind_pointer(statement, index, query, SEARCHLIGHT_VECTOR_QUERY_TYPE, NULL);
}

int searchlight_bind_typo_words(sqlite3_stmt *statement, int index, searchlight_typo_words *words) {
    return sqlite3_bind_pointer(statement, index, words, SEARCHLIGHT_TYPO_WORDS_TYPE, NULL);
}
