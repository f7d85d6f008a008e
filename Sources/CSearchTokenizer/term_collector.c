#include "term_collector.h"
#include "search_tokenizer.h"
#include "token_offers.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

// The terms the tokenizer produced for documents since the last drain, as a set: typo tolerance looks
// words up in a table of the index's terms, which the writer keeps current from this set instead of
// tokenizing every document a second time. One set per connection (in the tokenizer's user data), used
// only by that connection's thread, one statement at a time.

// Past this many distinct terms the set stops growing and remembers that it overflowed: the writer then
// refreshes the table from FTS5's vocabulary instead. Bounds memory when nobody drains (a 'rebuild').
enum { MAXIMUM_TERMS = 1 << 20 };

TermCollector *term_collector_new(void) {
    TermCollector *collector = calloc(1, sizeof(TermCollector));
    if (collector) collector->minimumScalars = SEARCHLIGHT_TYPO_MINIMUM_TERM;
    return collector;
}

TermCollector *term_collector_new_any(void) { return calloc(1, sizeof(TermCollector)); }

static void term_collector_clear(TermCollector *collector) {
    for (int i = 0; i < collector->capacity; i++) free(collector->slots[i]);
    free(collector->slots);
    collector->slots = NULL;
    collector->capacity = 0;
    collector->count = 0;
    collector->overflowed = 0;
}

void term_collector_free(void *pointer) {
    TermCollector *collector = pointer;
    if (!collector) return;
    term_collector_clear(collector);
    free(collector);
}

static unsigned long long hash(const char *bytes, int length) {
    unsigned long long h = 1469598103934665603ULL;  // FNV-1a
    for (int i = 0; i < length; i++) { h ^= (unsigned char)bytes[i]; h *= 1099511628211ULL; }
    return h;
}

// Slots hold NUL-terminated copies; a token never contains NUL (the tokenizer reads it as U+FFFD).
static int insert(char **slots, int capacity, char *term, int length) {
    unsigned long long mask = (unsigned long long)capacity - 1;
    for (unsigned long long i = hash(term, length) & mask;; i = (i + 1) & mask) {
        if (!slots[i]) { slots[i] = term; return 1; }
        if (strcmp(slots[i], term) == 0) return 0;
    }
}

static int contains(char **slots, int capacity, const char *term, int length) {
    unsigned long long mask = (unsigned long long)capacity - 1;
    for (unsigned long long i = hash(term, length) & mask; slots[i]; i = (i + 1) & mask) {
        if (strncmp(slots[i], term, (size_t)length) == 0 && slots[i][length] == 0) return 1;
    }
    return 0;
}

// Scalars in UTF-8: every byte that does not continue a sequence.
static int scalar_count(const char *bytes, int length) {
    int count = 0;
    for (int i = 0; i < length; i++) count += ((unsigned char)bytes[i] & 0xC0) != 0x80;
    return count;
}

int term_collector_add(TermCollector *collector, const char *term, int length) {
    if (!collector || collector->overflowed || length <= 0) return SQLITE_OK;
    if (collector->minimumScalars > 1 && scalar_count(term, length) < collector->minimumScalars) return SQLITE_OK;
    if (collector->capacity && contains(collector->slots, collector->capacity, term, length)) return SQLITE_OK;
    if (collector->count >= MAXIMUM_TERMS) { term_collector_clear(collector); collector->overflowed = 1; return SQLITE_OK; }
    if ((collector->count + 1) * 2 > collector->capacity) {
        int capacity = collector->capacity ? collector->capacity * 2 : 1024;
        char **slots = calloc((size_t)capacity, sizeof(char *));
        if (!slots) return SQLITE_NOMEM;
        for (int i = 0; i < collector->capacity; i++) {
            if (collector->slots[i]) insert(slots, capacity, collector->slots[i], (int)strlen(collector->slots[i]));
        }
        free(collector->slots);
        collector->slots = slots;
        collector->capacity = capacity;
    }
    char *copy = malloc((size_t)length + 1);
    if (!copy) return SQLITE_NOMEM;
    memcpy(copy, term, (size_t)length);
    copy[length] = 0;
    insert(collector->slots, collector->capacity, copy, length);
    collector->count++;
    return SQLITE_OK;
}

int term_collector_contains(TermCollector *collector, const char *term, int length) {
    return collector && collector->capacity && contains(collector->slots, collector->capacity, term, length);
}

void term_collector_reset(TermCollector *collector) {
    if (!collector || (!collector->count && !collector->overflowed)) return;
    if (collector->overflowed || collector->capacity > 4096) { term_collector_clear(collector); return; }
    for (int i = 0; i < collector->capacity; i++) { free(collector->slots[i]); collector->slots[i] = NULL; }
    collector->count = 0;
}

static int compare(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int searchlight_drain_terms(sqlite3 *db, void *context, searchlight_term_callback callback) {
    TokenizerShared *shared = tokenizer_shared_of(db);
    if (!shared) return -1;
    TermCollector *collector = shared->terms;
    if (collector->overflowed) { term_collector_clear(collector); return 1; }
    // In order: inserting sorted keys touches each B-tree page once.
    int count = 0;
    for (int i = 0; i < collector->capacity; i++) if (collector->slots[i]) collector->slots[count++] = collector->slots[i];
    qsort(collector->slots, (size_t)count, sizeof(char *), compare);
    int result = 0;
    for (int i = 0; i < count && result == 0; i++) result = callback(context, collector->slots[i], (int)strlen(collector->slots[i]));
    for (int i = count; i < collector->capacity; i++) collector->slots[i] = NULL;
    term_collector_clear(collector);
    return result == 0 ? 0 : -1;
}
