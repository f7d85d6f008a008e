#ifndef SEARCHLIGHT_TERM_COLLECTOR_H
#define SEARCHLIGHT_TERM_COLLECTOR_H

// The distinct terms the tokenizer produced for documents (see term_collector.c).
typedef struct TermCollector {
    char **slots;    // open addressing, capacity a power of two
    int capacity, count;
    int overflowed;  // too many to keep: the table is refreshed from the vocabulary instead
    int minimumScalars;  // shorter terms are not kept
} TermCollector;

/// A set of the terms long enough for typo tolerance.
TermCollector *term_collector_new(void);
/// A set of terms of any length.
TermCollector *term_collector_new_any(void);
void term_collector_free(void *collector);
/// Adds a token of a document, when it is long enough for the set. Returns an SQLite result code.
int term_collector_add(TermCollector *collector, const char *term, int length);
/// Whether the set holds the term.
int term_collector_contains(TermCollector *collector, const char *term, int length);
/// Empties the set, keeping its slots when they are few (it is emptied once per item re-indexed).
void term_collector_reset(TermCollector *collector);

#endif
