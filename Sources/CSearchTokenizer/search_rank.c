#include "search_tokenizer.h"
#include "fts5_api.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// BM25F: like FTS5's bm25, but each column's term frequency is normalized by that column's own length
// against its own average, so a long column (a place's hundred alternate names) does not bury a match
// in a short one (its name). Returns minus the score, like bm25: lower is better.
//
// The scoring itself (searchlight_scorer) knows nothing of FTS5: it takes a row's phrase instances, its
// value lengths and rank, and the query's statistics. The FTS5 function below feeds it from xInst; the
// PostgreSQL backend feeds it from the positions PostgreSQL stores. One ranking, two indexes.

struct searchlight_scorer {
    int phraseCount;
    double *idf;       // per phrase
    double average[SEARCHLIGHT_RANK_COLUMNS];  // per column: average length in tokens
    int *phraseSize;   // per phrase: its tokens
    double idfSum;
    // Typo tolerance: each phrase's group and edits, from the plan ("0:0 0:1 1:0 -"); and scratch for the
    // fewest edits a row matched per group. Without a plan every phrase is exact.
    int *phraseGroup, *phraseEdits, *groupEdits;
    int groupCount;
    // The fewest edits any row matching every group has: what top-k pruning's bound subtracts, so that a
    // query of typo expansions alone (a tier of them, see the typo search) prunes as an exact one does.
    int minimumEdits;
    int wholeValues;  // whether whole-value matches can be told (every phrase in a group)
    // Scratch space reused row after row (one query, one thread): value starts, covered positions and
    // per-phrase frequencies of the column being scored.
    int *starts;
    int startsCapacity;
    unsigned char *covered;
    int coveredCapacity;
    double *frequencies;
};

void searchlight_scorer_free(searchlight_scorer *scorer) {
    if (!scorer) return;
    free(scorer->idf);
    free(scorer->phraseSize);
    free(scorer->phraseGroup);
    free(scorer->starts);
    free(scorer->covered);
    free(scorer->frequencies);
    free(scorer);
}

static int read_plan(searchlight_scorer *scorer, const char *plan);
// A phrase that only steers which rows FTS5 visits ("x" in a plan: `(a OR b) AND (a OR b OR c)` visits the
// rows of a and b, and scores them by all three): it never counts in a score.
enum { STEERING_PHRASE = -2 };
static void plan_documents(const char *plan, int phrases, double *known);
static int reserve(void **buffer, int *capacity, int count, size_t element);

double searchlight_idf(double documents, long long rows) {
    double idf = log(((double)rows - documents + 0.5) / (documents + 0.5));
    return idf > 1e-6 ? idf : 1e-6; // as bm25: very common terms still count a little
}

// BM25's k1, and the weight of the static rank in a partial match's score.
static const double k1 = 1.2, partialRankWeight = 0.05;

double searchlight_partial_ceiling(double rank) {
    double importance = log10(1 + (rank > 0 && isfinite(rank) ? rank : 0));
    return (k1 + 1.0) * (1.0 + partialRankWeight * importance);
}

searchlight_scorer *searchlight_scorer_create(int phraseCount, const int *phraseSizes, const double *documentFrequencies,
                                              long long rows, const double *averages, const char *plan) {
    if (phraseCount < 0) return NULL;
    searchlight_scorer *scorer = calloc(1, sizeof(searchlight_scorer));
    if (!scorer) return NULL;
    scorer->phraseCount = phraseCount;
    scorer->idf = calloc((size_t)phraseCount + 1, sizeof(double));
    scorer->phraseSize = calloc((size_t)phraseCount + 1, sizeof(int));
    scorer->frequencies = calloc((size_t)phraseCount + 1, sizeof(double));
    if (!scorer->idf || !scorer->phraseSize || !scorer->frequencies || read_plan(scorer, plan) != SQLITE_OK
        || !reserve((void **)&scorer->starts, &scorer->startsCapacity, 1, sizeof(int))) {
        searchlight_scorer_free(scorer);
        return NULL;
    }
    for (int column = 0; column < SEARCHLIGHT_RANK_COLUMNS; column++) scorer->average[column] = averages[column];
    for (int phrase = 0; phrase < phraseCount; phrase++) {
        scorer->phraseSize[phrase] = phraseSizes[phrase];
        scorer->idf[phrase] = searchlight_idf(documentFrequencies[phrase], rows);
        if (scorer->phraseGroup[phrase] != STEERING_PHRASE) scorer->idfSum += scorer->idf[phrase];
    }
    return scorer;
}

// FTS5's side: the scorer, made once per query from FTS5's statistics and kept as auxdata, with what
// top-k pruning keeps between rows.
typedef struct RankData {
    searchlight_scorer *scorer;
    // Each row's instances, gathered from xInst for the scorer.
    searchlight_instance *instances;
    int instancesCapacity, gathered;
    // The rows holding the first phrase (its document frequency, as the IDF counts them).
    double firstFrequency;
    // Top-k pruning (a query that keeps only its best k rows, see searchlight_rank): the k best scores so
    // far as a min-heap, and the last row's result, for SQLite evaluating the function twice on one row.
    double *best;
    int bestCount, bestCapacity;
    sqlite3_int64 lastRowid;
    int hasLast;
    double lastResult;
} RankData;

static void rank_data_free(void *pointer) {
    RankData *data = pointer;
    if (!data) return;
    searchlight_scorer_free(data->scorer);
    free(data->instances);
    free(data->best);
    free(data);
}

static int count_row(const Fts5ExtensionApi *api, Fts5Context *context, void *user) {
    (void)api; (void)context;
    (*(sqlite3_int64 *)user)++;
    return SQLITE_OK;
}

// IDF and average lengths are the same for every row of a query: computed once, kept as auxdata.
static RankData *rank_data(const Fts5ExtensionApi *api, Fts5Context *context, const char *plan, int *rc) {
    RankData *data = api->xGetAuxdata(context, 0);
    if (data) return data;
    int phrases = api->xPhraseCount(context), columns = api->xColumnCount(context);
    sqlite3_int64 rows = 0;
    if ((*rc = api->xRowCount(context, &rows)) != SQLITE_OK) return NULL;
    double averages[SEARCHLIGHT_RANK_COLUMNS] = { 1.0, 1.0, 1.0, 1.0 };
    for (int column = 0; column < columns && column < SEARCHLIGHT_RANK_COLUMNS; column++) {
        sqlite3_int64 total = 0;
        if ((*rc = api->xColumnTotalSize(context, column, &total)) != SQLITE_OK) return NULL;
        averages[column] = rows > 0 && total > 0 ? (double)total / (double)rows : 1.0;
    }
    int *sizes = calloc((size_t)phrases + 1, sizeof(int));
    double *frequencies = calloc((size_t)phrases + 1, sizeof(double));
    if (!sizes || !frequencies) { free(sizes); free(frequencies); *rc = SQLITE_NOMEM; return NULL; }
    plan_documents(plan, phrases, frequencies);
    for (int phrase = 0; phrase < phrases && *rc == SQLITE_OK; phrase++) {
        sizes[phrase] = api->xPhraseSize(context, phrase);
        if (frequencies[phrase] >= 0) continue;
        sqlite3_int64 hits = 0;
        *rc = api->xQueryPhrase(context, phrase, &hits, count_row);
        frequencies[phrase] = (double)hits;
    }
    searchlight_scorer *scorer = *rc == SQLITE_OK ? searchlight_scorer_create(phrases, sizes, frequencies, rows, averages, plan) : NULL;
    double firstFrequency = phrases > 0 ? frequencies[0] : 0;
    free(sizes);
    free(frequencies);
    if (!scorer) { if (*rc == SQLITE_OK) *rc = SQLITE_NOMEM; return NULL; }
    data = calloc(1, sizeof(RankData));
    if (!data) { searchlight_scorer_free(scorer); *rc = SQLITE_NOMEM; return NULL; }
    data->scorer = scorer;
    data->firstFrequency = firstFrequency;
    if ((*rc = api->xSetAuxdata(context, data, rank_data_free)) != SQLITE_OK) return NULL;
    return data;
}

// The columns: display_name, title, text, keywords. Arguments: the four weights, the item's static rank,
// its value lengths, the query's phrase plan, and how many best rows the query keeps (0: all).
enum { TEXT_COLUMNS = SEARCHLIGHT_RANK_COLUMNS, RANK_ARGUMENT = 4, LENGTHS_ARGUMENT = 5, PLAN_ARGUMENT = 6, KEEP_ARGUMENT = 7 };

// The most rows a pruning query keeps (its heap's size); beyond, every row is scored.
enum { MAXIMUM_KEPT = 10000 };

// Adds a score to the k best (a min-heap: best[0] is the k-th best once full).
static int keep_score(RankData *data, int keep, double score) {
    if (data->bestCount < keep) {
        if (!reserve((void **)&data->best, &data->bestCapacity, data->bestCount + 1, sizeof(double))) return 0;
        int i = data->bestCount++;
        data->best[i] = score;
        while (i > 0 && data->best[(i - 1) / 2] > data->best[i]) {
            double swap = data->best[i]; data->best[i] = data->best[(i - 1) / 2]; data->best[(i - 1) / 2] = swap;
            i = (i - 1) / 2;
        }
        return 1;
    }
    if (score <= data->best[0]) return 1;
    data->best[0] = score;
    for (int i = 0;;) {
        int left = 2 * i + 1, right = left + 1, smallest = i;
        if (left < keep && data->best[left] < data->best[smallest]) smallest = left;
        if (right < keep && data->best[right] < data->best[smallest]) smallest = right;
        if (smallest == i) break;
        double swap = data->best[i]; data->best[i] = data->best[smallest]; data->best[smallest] = swap;
        i = smallest;
    }
    return 1;
}

// Without a plan every phrase is exact and its own group (the first 64; a row matching a later one is
// never a whole-value match).
static void each_phrase_a_group(searchlight_scorer *data) {
    data->groupCount = data->phraseCount < 64 ? data->phraseCount : 64;
    data->wholeValues = data->phraseCount <= 64;
    for (int phrase = 0; phrase < data->phraseCount; phrase++) {
        data->phraseGroup[phrase] = phrase < 64 ? phrase : -1;
        data->phraseEdits[phrase] = 0;
    }
}

// A number of plain digits at *cursor, at most `maximum`; 0 when there is none or it is larger.
static int read_number(const char **cursor, long maximum, long *value) {
    const char *c = *cursor;
    long number = 0;
    if (*c < '0' || *c > '9') return 0;
    while (*c >= '0' && *c <= '9') {
        number = number * 10 + (*c++ - '0');
        if (number > maximum) return 0;
    }
    *value = number;
    *cursor = c;
    return 1;
}

// One phrase's entry of a plan: its group (-1 excluded, STEERING_PHRASE), edits, and row count (-1: none).
typedef struct plan_entry { int group, edits; double documents; } plan_entry;

// Reads the entry at *cursor (spaces before it skipped): "-", "x" or "group:edits", then "@documents" or
// not, then a space or the plan's end. 1 when read (the cursor past it); 0 when malformed. read_plan and
// plan_documents both read entries here, so that they never split a plan differently.
static int read_plan_entry(const char **cursor, plan_entry *entry) {
    const char *c = *cursor;
    while (*c == ' ') c++;
    entry->group = 0;
    entry->edits = 0;
    entry->documents = -1;
    if (*c == '-' || *c == 'x') {
        entry->group = *c == '-' ? -1 : STEERING_PHRASE;
        c++;
    } else {
        long group = 0, edits = 0;
        if (!read_number(&c, 63, &group) || *c != ':') return 0;
        c++;
        if (!read_number(&c, 16, &edits)) return 0;
        entry->group = (int)group;
        entry->edits = (int)edits;
    }
    if (*c == '@') {
        long documents = 0;
        c++;
        if (!read_number(&c, 1000000000000000L, &documents)) return 0;
        entry->documents = (double)documents;
    }
    if (*c != ' ' && *c != '\0') return 0;
    *cursor = c;
    return 1;
}

// Reads the phrase plan: "group:edits" per phrase in FTS5's order, "-" for an excluded phrase, "x" for a
// steering one, each followed by "@documents" or not (see plan_documents). A plan that does not describe
// every phrase is ignored (every phrase then counts as exact).
static int read_plan(searchlight_scorer *data, const char *plan) {
    int phrases = data->phraseCount;
    data->phraseGroup = calloc((size_t)phrases * 2 + 65, sizeof(int));
    if (!data->phraseGroup) return SQLITE_NOMEM;
    data->wholeValues = 1;
    data->phraseEdits = data->phraseGroup + phrases;
    data->groupEdits = data->phraseEdits + phrases;
    if (!plan || !*plan) { each_phrase_a_group(data); return SQLITE_OK; }
    data->groupCount = 0;
    const char *cursor = plan;
    for (int phrase = 0; phrase < phrases; phrase++) {
        plan_entry entry;
        if (!read_plan_entry(&cursor, &entry)) { each_phrase_a_group(data); return SQLITE_OK; }
        // A row count the caller knows ("@408720", see plan_documents) is the scorer's input, not the plan's.
        data->phraseGroup[phrase] = entry.group;
        data->phraseEdits[phrase] = entry.edits;
        if (entry.group + 1 > data->groupCount) data->groupCount = entry.group + 1;
    }
    // A plan longer than the query's phrases numbers them otherwise: not to be trusted.
    while (*cursor == ' ') cursor++;
    if (*cursor) { each_phrase_a_group(data); return SQLITE_OK; }
    // Each group's fewest edits, summed (a group no phrase names counts none).
    int fewest[64];
    for (int group = 0; group < data->groupCount; group++) fewest[group] = -1;
    for (int phrase = 0; phrase < phrases; phrase++) {
        int group = data->phraseGroup[phrase], edits = data->phraseEdits[phrase];
        if (group >= 0 && (fewest[group] < 0 || edits < fewest[group])) fewest[group] = edits;
    }
    for (int group = 0; group < data->groupCount; group++) if (fewest[group] > 0) data->minimumEdits += fewest[group];
    return SQLITE_OK;
}

// The document counts a phrase plan gives ("0:1@408720": the caller knows the phrase's rows, from a term
// leader list), into known[phrase]; -1 where it gives none or is unreadable. Counting a phrase walks its
// whole doclist (xQueryPhrase): 408,720 rows for `europe`, for each statement that scores a few rows.
static void plan_documents(const char *plan, int phrases, double *known) {
    for (int phrase = 0; phrase < phrases; phrase++) known[phrase] = -1;
    if (!plan || !*plan) return;
    // Read whole first: a plan read_plan would not trust gives no counts either.
    const char *cursor = plan;
    for (int phrase = 0; phrase < phrases; phrase++) {
        plan_entry entry;
        if (!read_plan_entry(&cursor, &entry)) { for (int p = 0; p < phrases; p++) known[p] = -1; return; }
        known[phrase] = entry.documents;
    }
    while (*cursor == ' ') cursor++;
    if (*cursor) for (int phrase = 0; phrase < phrases; phrase++) known[phrase] = -1;
}

// The typos of a row: per group of alternatives, the fewest edits among the phrases it matched (kept in
// groupEdits, -1 for a group it did not match), summed.
static int row_edits(searchlight_scorer *data, const searchlight_instance *instances, int count) {
    for (int group = 0; group < data->groupCount; group++) data->groupEdits[group] = -1;
    for (int i = 0; i < count; i++) {
        int phrase = instances[i].phrase;
        if (phrase < 0 || phrase >= data->phraseCount) continue;
        int group = data->phraseGroup[phrase], edits = data->phraseEdits[phrase];
        if (group < 0) continue;
        if (data->groupEdits[group] < 0 || edits < data->groupEdits[group]) data->groupEdits[group] = edits;
    }
    int total = 0;
    for (int group = 0; group < data->groupCount; group++) if (data->groupEdits[group] > 0) total += data->groupEdits[group];
    return total;
}

// Grows a scratch buffer to hold `count` elements; 0 when memory runs out.
static int reserve(void **buffer, int *capacity, int count, size_t element) {
    if (count <= *capacity) return 1;
    if (count > (INT_MAX - 16) / 2) return 0;
    int grown = count * 2 + 16;
    void *bigger = realloc(*buffer, (size_t)grown * element);
    if (!bigger) return 0;
    *buffer = bigger;
    *capacity = grown;
    return 1;
}

// Weights of a whole-value match per column: the order of the relevance weights (name > title > text >
// keywords), close together, so that among places whose whole name or alternate name is what was typed
// the more important one (static rank) wins.
static const double exactWeights[TEXT_COLUMNS] = { 1.0, 0.9, 0.8, 0.7 };

// The column sizes an item's value_lengths gives: "D T|3 1 2|1 1" holds the display name's and title's
// positions, then each text and keyword value's. Reading them here spares FTS5's xColumnSize, a statement
// run against the docsize table for every row scored (over half of a common word's cost). 0 for the first
// format ("3 1 2|1 1", items written before it) or anything unreadable or implausible (a hostile index's
// two-billion-token column): FTS5 is asked instead.
enum { MAXIMUM_READ_SIZE = 1 << 20 };

int searchlight_value_lengths_sizes(const char *lengths, int *sizes) {
    if (!lengths) return 0;
    const char *first = strchr(lengths, '|'), *second = first ? strchr(first + 1, '|') : NULL;
    if (!second || strchr(second + 1, '|')) return 0;
    char *end = NULL;
    long name = strtol(lengths, &end, 10);
    if (end == lengths || *end != ' ' || name < 0 || name > MAXIMUM_READ_SIZE) return 0;
    const char *cursor = end + 1;
    long title = strtol(cursor, &end, 10);
    if (end == cursor || end != first || title < 0 || title > MAXIMUM_READ_SIZE) return 0;
    sizes[0] = (int)name;
    sizes[1] = (int)title;
    const char *sections[2] = { first + 1, second + 1 };
    for (int section = 0; section < 2; section++) {
        long total = 0;
        for (cursor = sections[section]; *cursor && *cursor != '|';) {
            long value = strtol(cursor, &end, 10);
            if (end == cursor || value < 0 || value > MAXIMUM_READ_SIZE) return 0;
            total += value;
            if (total > MAXIMUM_READ_SIZE) return 0;
            for (cursor = end; *cursor == ' '; cursor++) {}
        }
        sizes[2 + section] = (int)total;
    }
    return 1;
}

// Every token position of a column as a value number: the text and keywords columns hold several values
// (alternate names, tags), whose token counts the index keeps in value_lengths ("D T|3 1 2|1 1", or
// "3 1 2|1 1" first). A column whose counts are missing or disagree with its size is one value.
static int value_starts(const char *lengths, int sized, int column, int size, searchlight_scorer *data) {
    int *starts = data->starts;
    if (column < 2 || !lengths) { starts[0] = 0; return 1; }
    const char *cursor = lengths;
    for (int skip = (sized ? 1 : 0) + (column == 3 ? 1 : 0); skip > 0; skip--) {
        cursor = strchr(cursor, '|');
        if (!cursor) { starts[0] = 0; return 1; }
        cursor++;
    }
    int count = 0, position = 0;
    while (*cursor && *cursor != '|') {
        char *end = NULL;
        long length = strtol(cursor, &end, 10);
        // Against what is left of the column: the starts never pass its size, nor overflow.
        if (end == cursor || length < 0 || length > size - position) { data->starts[0] = 0; return 1; }
        if (!reserve((void **)&data->starts, &data->startsCapacity, count + 1, sizeof(int))) { data->starts[0] = 0; return 1; }
        starts = data->starts;
        starts[count++] = position;
        position += (int)length;
        cursor = end;
        while (*cursor == ' ') cursor++;
    }
    if (count == 0 || position != size) { starts[0] = 0; return 1; }
    return count;
}

static int value_of(const int *starts, int count, int position) {
    int low = 0, high = count - 1;
    while (low < high) {  // the last start <= position
        int middle = (low + high + 1) / 2;
        if (starts[middle] <= position) low = middle; else high = middle - 1;
    }
    return low;
}

// The best score a row of this static rank can reach in the query (top-k pruning's bound).
static double searchlight_scorer_bound(const searchlight_scorer *scorer, double rank) {
    double importance = log10(1 + (rank > 0 && isfinite(rank) ? rank : 0));
    double whole = SEARCHLIGHT_WHOLE_VALUE_SCORE + 1.0 + importance, partial = scorer->idfSum * searchlight_partial_ceiling(rank);
    return (whole > partial ? whole : partial) - SEARCHLIGHT_TYPO_PENALTY * scorer->minimumEdits;
}

// A row whose one value (its name, one alternate name, one tag) is entirely what was typed — every token
// of the value matched, and every query word the row matched found inside it, by the word itself or by its
// closest typo expansion that the row holds — is a whole-value match:
// it scores above every partial match, by its column's exact weight times 1 + log10(1 + rank), so the most
// important of the places called "Roma" comes first. Other rows score BM25F per value: each value's term
// frequencies normalized by that value's own length, the best value counting, so a long list of alternate
// names neither dilutes nor piles up a match; times a mild 1 + 0.05·log10(1 + rank). Each edit of the
// row's typo matches (per word, its closest expansion) then costs SEARCHLIGHT_TYPO_PENALTY.
int searchlight_scorer_score(searchlight_scorer *data, const searchlight_instance *instances, int instanceCount,
                             const int *sizes, int sized, const char *lengths, double rank, const double *weights, double *result) {
    const double b = 0.75, averageValueLength = 2.0;
    double importance = log10(1 + (rank > 0 && isfinite(rank) ? rank : 0));
    // One column at a time: values, then per value the phrases found, the positions covered and the
    // term frequencies.
    double bestExact = -1, bestPartial = 0;
    // The groups the row matched, each by its best (fewest-edit) phrases: a whole-value match is a value
    // that holds a best phrase of every one of them.
    int edits = row_edits(data, instances, instanceCount);
    unsigned long long rowMask = 0;
    for (int group = 0; group < data->groupCount; group++) if (data->groupEdits[group] >= 0) rowMask |= 1ULL << group;
    for (int column = 0; column < TEXT_COLUMNS; column++) {
        int size = sizes[column];
        if (size <= 0) continue;
        // A size read from another store's row (PostgreSQL's position counts) is bounded as value lengths
        // are: the covered-position map below is as large as the column.
        if (size > MAXIMUM_READ_SIZE) size = MAXIMUM_READ_SIZE;
        int hits = 0;
        for (int i = 0; i < instanceCount; i++) if (instances[i].column == column) hits++;
        if (hits == 0) continue;
        int count = value_starts(lengths, sized, column, size, data);
        const int *starts = data->starts;
        double weight = weights[column];
        // Per value of this column: the phrase mask, covered positions (a position bitmap over the
        // column), and each phrase's frequency. Instances come ordered by column, then offset: each
        // value's instances are consecutive, and a value is scored when the next value (or the column's
        // end) comes.
        if (!reserve((void **)&data->covered, &data->coveredCapacity, size, 1)) return SQLITE_NOMEM;
        unsigned char *covered = data->covered;
        memset(covered, 0, (size_t)size);
        double *frequencies = data->frequencies;
        int current = -1;
        unsigned long long mask = 0;
        for (int i = 0; i <= instanceCount; i++) {
            int phrase = -1, offset = 0, value = -1;
            if (i < instanceCount) {
                phrase = instances[i].phrase;
                offset = instances[i].offset;
                if (instances[i].column != column || offset < 0 || offset >= size || phrase < 0 || phrase >= data->phraseCount
                    || data->phraseGroup[phrase] == STEERING_PHRASE) continue;
                value = value_of(starts, count, offset);
            }
            if (i == instanceCount || value != current) {
                if (current >= 0) {
                    int first = starts[current], last = current + 1 < count ? starts[current + 1] : size;
                    int length = last - first, coveredCount = 0;
                    for (int position = first; position < last; position++) coveredCount += covered[position];
                    if (mask == rowMask && coveredCount == length && length > 0 && data->wholeValues && exactWeights[column] > bestExact) {
                        bestExact = exactWeights[column];
                    }
                    double norm = 1.0 - b + b * (double)length / (column < 2 ? data->average[column] : averageValueLength);
                    double score = 0;
                    for (int p = 0; p < data->phraseCount; p++) {
                        // Only a word's closest alternatives count: a row matched as typed scores as it
                        // would without typo tolerance, whatever near-misses it also holds.
                        int group = data->phraseGroup[p];
                        if (frequencies[p] > 0 && (group < 0 || data->phraseEdits[p] == data->groupEdits[group])) {
                            double tf = frequencies[p] * weight / (norm > 0.5 ? norm : 0.5);
                            score += data->idf[p] * tf * (k1 + 1.0) / (tf + k1);
                        }
                        frequencies[p] = 0;
                    }
                    if (score > bestPartial) bestPartial = score;
                }
                if (i == instanceCount) break;
                current = value;
                mask = 0;
            }
            int group = data->phraseGroup[phrase];
            if (group >= 0 && data->phraseEdits[phrase] == data->groupEdits[group]) mask |= 1ULL << group;
            frequencies[phrase] += 1;
            int phraseSize = data->phraseSize[phrase];
            // Only a word's closest alternatives cover a value: a near-miss beside the word typed changes nothing.
            if (group < 0 || data->phraseEdits[phrase] == data->groupEdits[group]) {
                for (int position = offset; position < offset + (phraseSize > 0 ? phraseSize : 1) && position < size; position++) covered[position] = 1;
            }
        }
    }
    double score = bestExact >= 0 ? SEARCHLIGHT_WHOLE_VALUE_SCORE + bestExact * (1.0 + importance) : bestPartial * (1.0 + partialRankWeight * importance);
    // Every edit costs more than any score: rows matched as typed come first, then one typo, then two.
    *result = score - SEARCHLIGHT_TYPO_PENALTY * edits;
    return SQLITE_OK;
}

// One row of searchlight_rank or searchlight_leader_rank: its score, or under top-k pruning the bound
// that left it unscored (*scored 0); *data the query's state, whose instances hold the scored row's.
// A second call on the same row (SQLite may evaluate the function twice) answers from the first, unscored,
// so the k best never count a row twice.
static int rank_row(const Fts5ExtensionApi *api, Fts5Context *context, int argumentCount, sqlite3_value **arguments,
                    RankData **dataOut, double *out, int *scored) {
    int rc = SQLITE_OK;
    *scored = 0;
    const char *plan = argumentCount > PLAN_ARGUMENT ? (const char *)sqlite3_value_text(arguments[PLAN_ARGUMENT]) : NULL;
    RankData *data = rank_data(api, context, plan, &rc);
    if (!data) return rc;
    *dataOut = data;
    double rank = argumentCount > RANK_ARGUMENT ? sqlite3_value_double(arguments[RANK_ARGUMENT]) : 0;
    // Top-k pruning. A query ordered by this score that keeps its best k rows passes k: a row whose score
    // cannot reach the k-th best seen so far is not scored, and gets that bound (itself below the k-th
    // best, so it never enters the page). The bound: a whole-value match scores at most 1000 + 1 + importance
    // (the heaviest column's weight is 1), a partial one at most the sum of the phrases' IDFs times k1 + 1,
    // times 1 + 0.05·importance; typos only subtract, each group's fewest edits at least (a row matches every
    // group, by one of its phrases at least). A row is pruned only when its bound is below a
    // score already computed for another row, so the k best rows come out exactly as without pruning.
    int keep = argumentCount > KEEP_ARGUMENT ? sqlite3_value_int(arguments[KEEP_ARGUMENT]) : 0;
    if (keep < 0 || keep > MAXIMUM_KEPT) keep = 0;
    sqlite3_int64 rowid = keep ? api->xRowid(context) : 0;
    if (keep) {
        if (data->hasLast && rowid == data->lastRowid) { *out = data->lastResult; return SQLITE_OK; }
        if (data->bestCount >= keep) {
            double bound = searchlight_scorer_bound(data->scorer, rank);
            double kth = data->best[0];
            // A margin for rounding: the bound and the score are computed in different orders.
            if (bound < kth - 1e-9 * fabs(kth)) {
                data->hasLast = 1; data->lastRowid = rowid; data->lastResult = -bound;
                *out = -bound;
                return SQLITE_OK;
            }
        }
    }
    int columns = api->xColumnCount(context);
    if (columns > TEXT_COLUMNS) columns = TEXT_COLUMNS;
    int instances = 0;
    if ((rc = api->xInstCount(context, &instances)) != SQLITE_OK) return rc;
    if (!reserve((void **)&data->instances, &data->instancesCapacity, instances + 1, sizeof(searchlight_instance))) return SQLITE_NOMEM;
    // FTS5 gives instances ordered by column, then offset, as the scorer wants them.
    int gathered = 0;
    for (int i = 0; i < instances; i++) {
        int phrase = 0, column = 0, offset = 0;
        if (api->xInst(context, i, &phrase, &column, &offset) != SQLITE_OK || column >= columns) continue;
        data->instances[gathered++] = (searchlight_instance){ phrase, column, offset };
    }
    data->gathered = gathered;
    const char *lengths = argumentCount > LENGTHS_ARGUMENT ? (const char *)sqlite3_value_text(arguments[LENGTHS_ARGUMENT]) : NULL;
    int sizes[TEXT_COLUMNS] = { 0 };
    int sized = searchlight_value_lengths_sizes(lengths, sizes);
    for (int column = 0; column < columns && !sized; column++) {
        // Only the columns this row matched in need a size: xColumnSize runs a statement.
        int matched = 0;
        for (int i = 0; i < gathered && !matched; i++) matched = data->instances[i].column == column;
        if (matched && (rc = api->xColumnSize(context, column, &sizes[column])) != SQLITE_OK) return rc;
    }
    double weights[TEXT_COLUMNS] = { 1.0, 1.0, 1.0, 1.0 };
    for (int column = 0; column < TEXT_COLUMNS && column < argumentCount; column++) weights[column] = sqlite3_value_double(arguments[column]);
    double score = 0;
    if ((rc = searchlight_scorer_score(data->scorer, data->instances, gathered, sizes, sized, lengths, rank, weights, &score)) != SQLITE_OK) return rc;
    if (keep) {
        if (!keep_score(data, keep, score)) return SQLITE_NOMEM;
        data->hasLast = 1; data->lastRowid = rowid; data->lastResult = -score;
    }
    *out = -score;
    *scored = 1;
    return SQLITE_OK;
}

// searchlight_rank(items_fts, w0, w1, w2, w3, rank, value_lengths, plan, keep): relevance, minus (lower is
// better, like bm25). The row's instances and column sizes come from FTS5 and go to the scorer.
static void searchlight_rank(const Fts5ExtensionApi *api, Fts5Context *context, sqlite3_context *result,
                             int argumentCount, sqlite3_value **arguments) {
    RankData *data = NULL;
    double value = 0;
    int scored = 0, rc = rank_row(api, context, argumentCount, arguments, &data, &value, &scored);
    if (rc != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
    sqlite3_result_double(result, value);
}

// searchlight_leader_rank(items_fts, …the same arguments): what listing a term keeps of a row in one pass.
// A row top-k pruning left unscored gives its bound, minus, as a REAL; a scored row a BLOB: its score,
// minus, and the term's document frequency as the IDF counts it (two native doubles), then its instances as
// (phrase, column, offset) native int triples in FTS5's order. A second evaluation of a row gives the REAL
// (its instances are not kept): a lister then sees a kept row without instances and lists nothing.
static void searchlight_leader_rank(const Fts5ExtensionApi *api, Fts5Context *context, sqlite3_context *result,
                                    int argumentCount, sqlite3_value **arguments) {
    RankData *data = NULL;
    double value = 0;
    int scored = 0, rc = rank_row(api, context, argumentCount, arguments, &data, &value, &scored);
    if (rc != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
    if (!scored) { sqlite3_result_double(result, value); return; }
    enum { HEADER = 2 * sizeof(double) };
    sqlite3_int64 bytes = HEADER + (sqlite3_int64)data->gathered * 3 * (sqlite3_int64)sizeof(int);
    if (bytes > INT_MAX) { sqlite3_result_error_toobig(result); return; }
    unsigned char *blob = sqlite3_malloc64((sqlite3_uint64)bytes);
    if (!blob) { sqlite3_result_error_nomem(result); return; }
    memcpy(blob, &value, sizeof(double));
    memcpy(blob + sizeof(double), &data->firstFrequency, sizeof(double));
    for (int i = 0; i < data->gathered; i++) {
        int triple[3] = { data->instances[i].phrase, data->instances[i].column, data->instances[i].offset };
        memcpy(blob + HEADER + (size_t)i * sizeof triple, triple, sizeof triple);
    }
    sqlite3_result_blob(result, blob, (int)bytes, sqlite3_free);
}

// searchlight_statistics(items_fts): the rows FTS5 holds and each ranked column's average length, as
// searchlight_rank computes them (five native doubles): a term leader list's scores are computed from them.
static void searchlight_statistics(const Fts5ExtensionApi *api, Fts5Context *context, sqlite3_context *result,
                                   int argumentCount, sqlite3_value **arguments) {
    (void)argumentCount; (void)arguments;
    sqlite3_int64 rows = 0;
    int rc = api->xRowCount(context, &rows), columns = api->xColumnCount(context);
    if (rc != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
    double statistics[1 + TEXT_COLUMNS] = { (double)rows, 1.0, 1.0, 1.0, 1.0 };
    for (int column = 0; column < columns && column < TEXT_COLUMNS; column++) {
        sqlite3_int64 total = 0;
        if ((rc = api->xColumnTotalSize(context, column, &total)) != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
        statistics[1 + column] = rows > 0 && total > 0 ? (double)total / (double)rows : 1.0;
    }
    sqlite3_result_blob(result, statistics, (int)sizeof statistics, SQLITE_TRANSIENT);
}

int searchlight_register_rank(sqlite3 *db) {
    fts5_api *api = NULL;
    int rc = searchlight_fts5_api(db, &api);
    if (rc != SQLITE_OK) return rc;
    if ((rc = api->xCreateFunction(api, "searchlight_leader_rank", NULL, searchlight_leader_rank, NULL)) != SQLITE_OK) return rc;
    if ((rc = api->xCreateFunction(api, "searchlight_statistics", NULL, searchlight_statistics, NULL)) != SQLITE_OK) return rc;
    return api->xCreateFunction(api, "searchlight_rank", NULL, searchlight_rank, NULL);
}
