#ifndef SEARCHLIGHT_FTS5_API_H
#define SEARCHLIGHT_FTS5_API_H

#include <sqlite3.h>

/// The connection's fts5_api, obtained through `SELECT fts5(?1)` as SQLite documents. Internal.
int searchlight_fts5_api(sqlite3 *db, fts5_api **api);

#endif
