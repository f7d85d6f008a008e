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

// searchlight_placed(latitude, longitude, placement): whether a place passes the search's place filters,
// asked of the search itself (a pointer bound for the statement). Lets a ranking that keeps only its
// best rows see only rows the search keeps: a row outside the circle must not raise the bar.
static void searchlight_placed(sqlite3_context *context, int argumentCount, sqlite3_value **arguments) {
    (void)argumentCount;
    const searchlight_placement *placement = sqlite3_value_pointer(arguments[2], SEARCHLIGHT_PLACEMENT_TYPE);
    if (!placement || !placement->contains) { sqlite3_result_int(context, 0); return; }
    int located = sqlite3_value_type(arguments[0]) != SQLITE_NULL && sqlite3_value_type(arguments[1]) != SQLITE_NULL;
    sqlite3_result_int(context, placement->contains(placement->context, sqlite3_value_double(arguments[0]),
                                                    sqlite3_value_double(arguments[1]), located) != 0);
}

int searchlight_register_id_set(sqlite3 *db) {
    int rc = sqlite3_create_function_v2(db, "searchlight_in_ids", 2, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                        searchlight_in_ids, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_create_function_v2(db, "searchlight_placed", 3, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL,
                                      searchlight_placed, NULL, NULL, NULL);
}

int searchlight_bind_placement(sqlite3_stmt *statement, int index, const searchlight_placement *placement) {
    return sqlite3_bind_pointer(statement, index, (void *)placement, SEARCHLIGHT_PLACEMENT_TYPE, NULL);
}

int searchlight_bind_id_set(sqlite3_stmt *statement, int index, const searchlight_id_set *set) {
    return sqlite3_bind_pointer(statement, index, (void *)set, SEARCHLIGHT_ID_SET_TYPE, NULL);
}
