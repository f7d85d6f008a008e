#include "search_tokenizer.h"

#include <sqlite3.h>
#include <stddef.h>

// searchlight_in_ids(rowid, ids): whether rowid is one of a sorted array of row ids bound as a pointer.
// Lets one FTS5 scan keep only the rows a place already selected, before any join or scoring: FTS5
// answers `rowid IN (…)` with one cursor per value, which rebuilds a prefix's doclist for each row.
static void searchlight_in_ids(sqlite3_context *context, int argumentCount, sqlite3_value **arguments) {
    (void)argumentCount;
    const searchlight_id_set *set = sqlite3_value_pointer(arguments[1], SEARCHLIGHT_ID_SET_TYPE);
    if (!set || set->count <= 0 || !set->ids) { sqlite3_result_int(context, 0); return; }
    sqlite3_int64 id = sqlite3_value_int64(arguments[0]);
    long low = 0, high = set->count - 1;
    while (low <= high) {
        long middle = low + (high - low) / 2;
        if (set->ids[middle] == id) { sqlite3_result_int(context, 1); return; }
        if (set->ids[middle] < id) low = middle + 1; else high = middle - 1;
    }
    sqlite3_result_int(context, 0);
}

int searchlight_register_id_set(sqlite3 *db) {
    return sqlite3_create_function_v2(db, "searchlight_in_ids", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                      searchlight_in_ids, NULL, NULL, NULL);
}

int searchlight_bind_id_set(sqlite3_stmt *statement, int index, const searchlight_id_set *set) {
    return sqlite3_bind_pointer(statement, index, (void *)set, SEARCHLIGHT_ID_SET_TYPE, NULL);
}
