#include "search_tokenizer.h"
#include "fts5_api.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

// BM25F: like FTS5's bm25, but each column's term frequency is normalized by that column's own length
// against its own average, so a long column (a place's hundred alternate names) does not bury a match
// in a short one (its name). Returns minus the score, like bm25: lower is better.

typedef struct RankData {
    int phraseCount, columnCount;
    double *idf;      // per phrase
    double *average;  // per column: average length in tokens
} RankData;

static int count_row(const Fts5ExtensionApi *api, Fts5Context *context, void *user) {
    (void)api; (void)context;
    (*(sqlite3_int64 *)user)++;
    return SQLITE_OK;
}

// IDF and average lengths are the same for every row of a query: computed once, kept as auxdata.
static RankData *rank_data(const Fts5ExtensionApi *api, Fts5Context *context, int *rc) {
    RankData *data = api->xGetAuxdata(context, 0);
    if (data) return data;
    int phrases = api->xPhraseCount(context), columns = api->xColumnCount(context);
    sqlite3_int64 rows = 0;
    if ((*rc = api->xRowCount(context, &rows)) != SQLITE_OK) return NULL;
    data = calloc(1, sizeof(RankData) + sizeof(double) * (size_t)(phrases + columns));
    if (!data) { *rc = SQLITE_NOMEM; return NULL; }
    data->phraseCount = phrases;
    data->columnCount = columns;
    data->idf = (double *)(data + 1);
    data->average = data->idf + phrases;
    for (int column = 0; column < columns; column++) {
        sqlite3_int64 total = 0;
        if ((*rc = api->xColumnTotalSize(context, column, &total)) != SQLITE_OK) { free(data); return NULL; }
        data->average[column] = rows > 0 && total > 0 ? (double)total / (double)rows : 1.0;
    }
    for (int phrase = 0; phrase < phrases; phrase++) {
        sqlite3_int64 hits = 0;
        if ((*rc = api->xQueryPhrase(context, phrase, &hits, count_row)) != SQLITE_OK) { free(data); return NULL; }
        double idf = log(((double)rows - (double)hits + 0.5) / ((double)hits + 0.5));
        data->idf[phrase] = idf > 1e-6 ? idf : 1e-6; // as bm25: very common terms still count a little
    }
    if ((*rc = api->xSetAuxdata(context, data, free)) != SQLITE_OK) return NULL;
    return data;
}

static void searchlight_rank(const Fts5ExtensionApi *api, Fts5Context *context, sqlite3_context *result,
                             int argumentCount, sqlite3_value **arguments) {
    const double k1 = 1.2, b = 0.75;
    int rc = SQLITE_OK;
    RankData *data = rank_data(api, context, &rc);
    if (!data) { sqlite3_result_error_code(result, rc); return; }
    double norms[16];
    int columns = data->columnCount < 16 ? data->columnCount : 16;
    for (int column = 0; column < columns; column++) {
        int size = 0;
        if ((rc = api->xColumnSize(context, column, &size)) != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
        double weight = column < argumentCount ? sqlite3_value_double(arguments[column]) : 1.0;
        double norm = 1.0 - b + b * (double)size / data->average[column];
        // Shorter than average gains at most 2×: a brief mention in a short text must not outrank a
        // name match, while long fields are still normalized fully.
        norms[column] = weight / (norm > 0.5 ? norm : 0.5);
    }
    double stackFrequencies[64];
    double *frequencies = data->phraseCount <= 64 ? stackFrequencies : calloc((size_t)data->phraseCount, sizeof(double));
    if (!frequencies) { sqlite3_result_error_nomem(result); return; }
    for (int phrase = 0; phrase < data->phraseCount; phrase++) frequencies[phrase] = 0;
    int instances = 0;
    if ((rc = api->xInstCount(context, &instances)) == SQLITE_OK) {
        for (int i = 0; i < instances; i++) {
            int phrase = 0, column = 0, offset = 0;
            if ((rc = api->xInst(context, i, &phrase, &column, &offset)) != SQLITE_OK) break;
            if (phrase >= 0 && phrase < data->phraseCount && column >= 0 && column < columns) frequencies[phrase] += norms[column];
        }
    }
    double score = 0;
    for (int phrase = 0; phrase < data->phraseCount; phrase++) {
        double tf = frequencies[phrase];
        score += data->idf[phrase] * tf * (k1 + 1.0) / (tf + k1);
    }
    if (frequencies != stackFrequencies) free(frequencies);
    if (rc != SQLITE_OK) { sqlite3_result_error_code(result, rc); return; }
    sqlite3_result_double(result, -score);
}

int searchlight_register_rank(sqlite3 *db) {
    fts5_api *api = NULL;
    int rc = searchlight_fts5_api(db, &api);
    if (rc != SQLITE_OK) return rc;
    return api->xCreateFunction(api, "searchlight_rank", NULL, searchlight_rank, NULL);
}
