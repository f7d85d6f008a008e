#include "search_tokenizer.h"
#include "fts5_api.h"
#include "term_collector.h"
#include "token_offers.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>

// Reusable state: a word break iterator and growable buffers. One per FTS5 tokenizer instance,
// which SQLite only uses from its own connection, one call at a time.
typedef struct Tokenizer {
    UBreakIterator *breaks;
    UChar *text;            // input as UTF-16
    int *offsets;           // UTF-16 index -> UTF-8 byte offset in the input (one past the end too)
    int capacity;
    UChar *scratch1, *scratch2;
    char *utf8;
    int scratchCapacity;
    TokenizerShared *shared;   // the connection's terms and offers, when FTS5 created this tokenizer; not owned
} Tokenizer;

static void tokenizer_free(Tokenizer *t) {
    if (!t) return;
    if (t->breaks) ubrk_close(t->breaks);
    free(t->text); free(t->offsets); free(t->scratch1); free(t->scratch2); free(t->utf8);
    free(t);
}

static Tokenizer *tokenizer_new(void) {
    Tokenizer *t = calloc(1, sizeof(Tokenizer));
    if (!t) return NULL;
    UErrorCode status = U_ZERO_ERROR;
    // The root locale's word rules segment every script; ICU's dictionaries split Chinese,
    // Japanese, Thai, Lao, Khmer and Burmese into words.
    t->breaks = ubrk_open(UBRK_WORD, "", NULL, 0, &status);
    if (U_FAILURE(status)) { tokenizer_free(t); return NULL; }
    return t;
}

static int ensure_capacity(Tokenizer *t, int length) {
    if (length + 1 <= t->capacity) return 1;
    int capacity = (length + 1) * 2;
    UChar *text = realloc(t->text, sizeof(UChar) * capacity);
    if (!text) return 0;
    t->text = text;
    int *offsets = realloc(t->offsets, sizeof(int) * (capacity + 1));
    if (!offsets) return 0;
    t->offsets = offsets;
    t->capacity = capacity;
    return 1;
}

static int ensure_scratch(Tokenizer *t, int length) {
    if (length <= t->scratchCapacity) return 1;
    int capacity = length * 2 + 16;
    UChar *a = realloc(t->scratch1, sizeof(UChar) * capacity);
    if (!a) return 0;
    t->scratch1 = a;
    UChar *b = realloc(t->scratch2, sizeof(UChar) * capacity);
    if (!b) return 0;
    t->scratch2 = b;
    char *c = realloc(t->utf8, (size_t)capacity * 3 + 4);
    if (!c) return 0;
    t->utf8 = c;
    t->scratchCapacity = capacity;
    return 1;
}

// Decodes UTF-8 into UTF-16, remembering where each UTF-16 unit started in bytes. Invalid
// sequences become U+FFFD, one per bad byte, so offsets stay exact.
static int decode_utf8(Tokenizer *t, const unsigned char *s, int length) {
    if (!ensure_capacity(t, length * 2)) return -1;
    int n = 0, i = 0;
    while (i < length) {
        unsigned int c = s[i];
        int size = 1;
        unsigned int cp = 0xFFFD;
        if (c < 0x80) { cp = c; }
        else if ((c & 0xE0) == 0xC0 && i + 1 < length && (s[i+1] & 0xC0) == 0x80) {
            cp = ((c & 0x1F) << 6) | (s[i+1] & 0x3F); size = 2;
            if (cp < 0x80) { cp = 0xFFFD; size = 1; }
        } else if ((c & 0xF0) == 0xE0 && i + 2 < length && (s[i+1] & 0xC0) == 0x80 && (s[i+2] & 0xC0) == 0x80) {
            cp = ((c & 0x0F) << 12) | ((s[i+1] & 0x3F) << 6) | (s[i+2] & 0x3F); size = 3;
            if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)) { cp = 0xFFFD; size = 1; }
        } else if ((c & 0xF8) == 0xF0 && i + 3 < length && (s[i+1] & 0xC0) == 0x80 && (s[i+2] & 0xC0) == 0x80 && (s[i+3] & 0xC0) == 0x80) {
            cp = ((c & 0x07) << 18) | ((s[i+1] & 0x3F) << 12) | ((s[i+2] & 0x3F) << 6) | (s[i+3] & 0x3F); size = 4;
            if (cp < 0x10000 || cp > 0x10FFFF) { cp = 0xFFFD; size = 1; }
        }
        if (cp == 0) cp = 0xFFFD; // NUL would end ICU's strings early
        if (cp >= 0x10000) {
            t->offsets[n] = i; t->text[n++] = (UChar)U16_LEAD(cp);
            t->offsets[n] = i; t->text[n++] = (UChar)U16_TRAIL(cp);
        } else {
            t->offsets[n] = i; t->text[n++] = (UChar)cp;
        }
        i += size;
    }
    t->offsets[n] = length;
    t->text[n] = 0;
    return n;
}

// Combining marks that are diacritics to drop: the generic combining blocks and Hebrew/Arabic
// vowel points. Not every nonspacing mark: Thai and Indic vowel signs and the kana voicing marks
// are letters' parts, and dropping them would change words.
static int is_removable_mark(UChar c) {
    return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF)
        || (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F)
        || (c >= 0x0591 && c <= 0x05BD) || c == 0x05BF || c == 0x05C1 || c == 0x05C2 || c == 0x05C4 || c == 0x05C5 || c == 0x05C7
        || (c >= 0x064B && c <= 0x065F) || c == 0x0670;
}

// Normalizes one segment into t->utf8; returns its byte length, 0 when nothing is left, -1 on error.
static int normalize(Tokenizer *t, const UChar *segment, int length, const char *original, int originalLength) {
    int ascii = 1;
    for (int i = 0; i < originalLength; i++) if ((unsigned char)original[i] >= 0x80) { ascii = 0; break; }
    if (!ensure_scratch(t, length * 4 + 8)) return -1;
    if (ascii) {
        for (int i = 0; i < originalLength; i++) {
            char c = original[i];
            t->utf8[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
        }
        return originalLength;
    }
    UErrorCode status = U_ZERO_ERROR;
    int folded = u_strFoldCase(t->scratch1, t->scratchCapacity, segment, length, U_FOLD_CASE_DEFAULT, &status);
    if (U_FAILURE(status)) return -1;
    const UNormalizer2 *nfkd = unorm2_getNFKDInstance(&status);
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) return -1;
    int decomposed = unorm2_normalize(nfkd, t->scratch1, folded, t->scratch2, t->scratchCapacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        status = U_ZERO_ERROR;
        if (!ensure_scratch(t, decomposed + 8)) return -1;
        folded = u_strFoldCase(t->scratch1, t->scratchCapacity, segment, length, U_FOLD_CASE_DEFAULT, &status);
        decomposed = unorm2_normalize(nfkd, t->scratch1, folded, t->scratch2, t->scratchCapacity, &status);
    }
    if (U_FAILURE(status)) return -1;
    int kept = 0;
    for (int i = 0; i < decomposed; i++) if (!is_removable_mark(t->scratch2[i])) t->scratch2[kept++] = t->scratch2[i];
    if (kept == 0) return 0;
    int composed = unorm2_normalize(nfc, t->scratch2, kept, t->scratch1, t->scratchCapacity, &status);
    if (U_FAILURE(status)) return -1;
    int32_t bytes = 0;
    u_strToUTF8(t->utf8, t->scratchCapacity * 3 + 4, &bytes, t->scratch1, composed, &status);
    if (U_FAILURE(status)) return -1;
    return bytes;
}

// colocated: the token is another name for the previous one, at its position (an identifier's part).
typedef int (*emit_fn)(void *context, const char *token, int token_length, int start, int end, int colocated);

// Only a word's first 256 UTF-16 units are normalized and indexed (its offsets still span the whole
// word). Canonical reordering of combining marks is quadratic in their run: a "word" of 100,000
// alternating marks took 45 s to normalize. Documents and queries are cut alike, so matching holds.
enum { MAX_TOKEN_UNITS = 256 };

// Internal failures are negative so they never collide with a callback's own non-zero result.
enum { TOKENIZE_FAILED = -1, TOKENIZE_NOMEM = -2 };

// A separator inside an ICU word: `_`, `.`, `@`, `'`, `:` — anything but letters, digits and marks.
static int is_separator(UChar c) {
    return !U16_IS_SURROGATE(c) && !u_isalnum(c) && !(U_GET_GC_MASK(c) & U_GC_M_MASK);
}

static int is_upper(UChar c) { return !U16_IS_SURROGATE(c) && u_isupper(c); }
static int is_lower(UChar c) { return !U16_IS_SURROGATE(c) && u_islower(c); }

// Whether a word part boundary falls before unit i of [start, end): camelCase (`deviceMigration`),
// an acronym before a word (`HTTPServer` → HTTP, Server). Digits never split (`FD0781A4`).
static int is_camel_boundary(const UChar *text, int start, int i, int end) {
    if (i <= start || i >= end) return 0;
    if (is_lower(text[i - 1]) && is_upper(text[i])) return 1;
    return is_upper(text[i - 1]) && is_upper(text[i]) && i + 1 < end && is_lower(text[i + 1]);
}

// Emits the parts of [start, end) between camelCase boundaries, colocated, when there are several.
static int emit_camel_parts(Tokenizer *t, const char *text, int start, int end, void *context, emit_fn emit) {
    int boundaries = 0;
    for (int i = start + 1; i < end; i++) boundaries += is_camel_boundary(t->text, start, i, end);
    if (boundaries == 0) return 0;
    for (int from = start, i = start + 1; i <= end; i++) {
        if (i < end && !is_camel_boundary(t->text, start, i, end)) continue;
        int byteStart = t->offsets[from], byteEnd = t->offsets[i];
        int size = normalize(t, t->text + from, i - from, text + byteStart, byteEnd - byteStart);
        if (size < 0) return TOKENIZE_FAILED;
        if (size > 0) {
            int rc = emit(context, t->utf8, size, byteStart, byteEnd, 1);
            if (rc != 0) return rc;
        }
        from = i;
    }
    return 0;
}

// Identifiers are findable by their parts: after a word such as `DeviceMigrationState_FD0781A4`,
// `example.com` or `support@example.com` (ICU keeps `_`, a `.` between letters, e-mail addresses inside
// one word), its parts between separators and between camelCase humps follow, colocated with it, so `DeviceMigrationState`, `migration` and
// `fd0781a4` all match while the whole word still does. Only documents carry parts: a query word is
// matched as typed.
static int emit_parts(Tokenizer *t, const char *text, int start, int end, void *context, emit_fn emit) {
    int separators = 0;
    for (int i = start; i < end; i++) separators += is_separator(t->text[i]);
    if (separators == 0) return emit_camel_parts(t, text, start, end, context, emit);
    for (int from = start, i = start; i <= end; i++) {
        if (i < end && !is_separator(t->text[i])) continue;
        if (i > from) {
            int byteStart = t->offsets[from], byteEnd = t->offsets[i];
            int size = normalize(t, t->text + from, i - from, text + byteStart, byteEnd - byteStart);
            if (size < 0) return TOKENIZE_FAILED;
            if (size > 0) {
                int rc = emit(context, t->utf8, size, byteStart, byteEnd, 1);
                if (rc == 0) rc = emit_camel_parts(t, text, from, i, context, emit);
                if (rc != 0) return rc;
            }
        }
        from = i + 1;
    }
    return 0;
}

static int tokenize_with(Tokenizer *t, const char *text, int length, int withParts, void *context, emit_fn emit) {
    if (length <= 0) return 0;
    int units = decode_utf8(t, (const unsigned char *)text, length);
    if (units < 0) return TOKENIZE_NOMEM;
    UErrorCode status = U_ZERO_ERROR;
    ubrk_setText(t->breaks, t->text, units, &status);
    if (U_FAILURE(status)) return TOKENIZE_FAILED;
    int start = ubrk_first(t->breaks);
    for (int end = ubrk_next(t->breaks); end != UBRK_DONE; start = end, end = ubrk_next(t->breaks)) {
        if (ubrk_getRuleStatus(t->breaks) < UBRK_WORD_NONE_LIMIT) continue; // spaces and punctuation
        int byteStart = t->offsets[start], byteEnd = t->offsets[end];
        int kept = end - start;
        if (kept > MAX_TOKEN_UNITS) {
            kept = MAX_TOKEN_UNITS;
            if (U16_IS_LEAD(t->text[start + kept - 1])) kept--; // never split a surrogate pair
        }
        int keptBytes = t->offsets[start + kept] - byteStart;
        int size = normalize(t, t->text + start, kept, text + byteStart, keptBytes);
        if (size < 0) return TOKENIZE_FAILED;
        if (size == 0) continue;
        int rc = emit(context, t->utf8, size, byteStart, byteEnd, 0);
        if (rc == 0 && withParts) rc = emit_parts(t, text, start, start + kept, context, emit);
        if (rc != 0) return rc;
    }
    return 0;
}

// MARK: FTS5 glue

typedef struct FTS5Call {
    void *context;
    int (*xToken)(void *, int, const char *, int, int, int);
    TermCollector *collector;  // documents only: their terms feed the typo-tolerance term table
    TokenizerShared *shared;
    int document;              // documents' tokens (written or deleted) touch the term leader lists
} FTS5Call;

static int fts5_emit(void *context, const char *token, int token_length, int start, int end, int colocated) {
    FTS5Call *call = context;
    if (call->collector) {
        int replacing = call->shared ? call->shared->replacing : 0;
        int rc = SQLITE_OK;
        if (replacing == SEARCHLIGHT_TERMS_OLD_ROW) {
            rc = term_collector_add(call->shared->oldTerms, token, token_length);
        } else if (replacing != SEARCHLIGHT_TERMS_NEW_ROW || !term_collector_contains(call->shared->oldTerms, token, token_length)) {
            rc = term_collector_add(call->collector, token, token_length);
        }
        if (rc != SQLITE_OK) return rc;
    }
    if (call->document && call->shared) tokenizer_shared_note_token(call->shared, token, token_length);
    return call->xToken(call->context, colocated ? FTS5_TOKEN_COLOCATED : 0, token, token_length, start, end);
}

// Emits a prepared stream's tokens exactly as tokenizing its text would have.
static int replay(const TokenOffer *offer, FTS5Call *call) {
    int at = 0, status;
    TokenRecord record;
    while ((status = token_stream_next(offer->stream, offer->streamLength, &at, &record)) == 1) {
        int rc = fts5_emit(call, record.token, record.length, record.start, record.end, record.colocated);
        if (rc != SQLITE_OK) return rc;
    }
    return status == 0 ? SQLITE_OK : SQLITE_CORRUPT;
}

static int fts5_create(void *shared, const char **args, int count, Fts5Tokenizer **out) {
    (void)args; (void)count;
    Tokenizer *t = tokenizer_new();
    if (!t) return SQLITE_ERROR;
    t->shared = shared;
    *out = (Fts5Tokenizer *)t;
    return SQLITE_OK;
}

static void fts5_delete(Fts5Tokenizer *tokenizer) { tokenizer_free((Tokenizer *)tokenizer); }

static int fts5_tokenize(Fts5Tokenizer *tokenizer, void *context, int flags, const char *text, int length,
                         int (*xToken)(void *, int, const char *, int, int, int)) {
    int document = (flags & FTS5_TOKENIZE_DOCUMENT) != 0;
    TokenizerShared *shared = ((Tokenizer *)tokenizer)->shared;
    FTS5Call call = { context, xToken, document && shared && !shared->pausesTerms ? shared->terms : NULL, shared, document };
    // A document prepared ahead on another thread: its stream, replayed (token_offers.c).
    TokenOffer *offer = document ? token_offers_take(shared, text, length) : NULL;
    if (offer) return replay(offer, &call);
    // Parts go into the index only (documents, and the deletes that re-tokenize them): queries match
    // words as typed, and highlight and snippets walk whole words.
    int rc = tokenize_with((Tokenizer *)tokenizer, text, length, document, &call, fts5_emit);
    return rc == TOKENIZE_NOMEM ? SQLITE_NOMEM : rc == TOKENIZE_FAILED ? SQLITE_ERROR : rc;
}

int searchlight_fts5_api(sqlite3 *db, fts5_api **api) {
    *api = NULL;
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, NULL);
    if (rc != SQLITE_OK) return rc;
    sqlite3_bind_pointer(statement, 1, (void *)api, "fts5_api_ptr", NULL);
    sqlite3_step(statement);
    rc = sqlite3_finalize(statement);
    if (rc != SQLITE_OK) return rc;
    return *api ? SQLITE_OK : SQLITE_ERROR;
}

int searchlight_register_tokenizer(sqlite3 *db) {
    fts5_api *api = NULL;
    int rc = searchlight_fts5_api(db, &api);
    if (rc != SQLITE_OK) return rc;
    fts5_tokenizer methods = { fts5_create, fts5_delete, fts5_tokenize };
    // The connection's term set and offers live as long as the registration; SQLite frees them.
    TokenizerShared *shared = tokenizer_shared_new();
    if (!shared) return SQLITE_NOMEM;
    rc = api->xCreateTokenizer(api, SEARCHLIGHT_TOKENIZER_NAME, shared, &methods, tokenizer_shared_free);
    if (rc != SQLITE_OK) tokenizer_shared_free(shared);  // SQLite calls xDestroy only once registered
    return rc;
}

// MARK: direct use

// Opening a break iterator costs more than tokenizing a query, so each thread keeps one.
static _Thread_local Tokenizer *thread_tokenizer = NULL;

// This thread's tokenizer, made on first use; NULL when memory runs out.
static Tokenizer *this_thread_tokenizer(void) {
    if (!thread_tokenizer) thread_tokenizer = tokenizer_new();
    return thread_tokenizer;
}

typedef struct DirectCall {
    void *context;
    searchlight_token_callback callback;
} DirectCall;

static int direct_emit(void *context, const char *token, int token_length, int start, int end, int colocated) {
    DirectCall *call = context;
    return call->callback(call->context, token, token_length, start, end, colocated);
}

int searchlight_tokenize(const char *text, int length, int withParts, void *context, searchlight_token_callback callback) {
    Tokenizer *tokenizer = this_thread_tokenizer();
    if (!tokenizer) return -1;
    DirectCall call = { context, callback };
    int rc = tokenize_with(tokenizer, text, length, withParts, &call, direct_emit);
    return rc < 0 ? -1 : rc;
}

// Writes a token stream (token_offers.h's TokenRecord format).
typedef struct StreamWriter {
    unsigned char *buffer;
    int capacity, length;
} StreamWriter;

static int stream_emit(void *context, const char *token, int token_length, int start, int end, int colocated) {
    StreamWriter *writer = context;
    int needed = TOKEN_RECORD_HEADER + token_length;
    // Past the capacity only the length grows: the caller learns the size to call again with.
    if (writer->length <= writer->capacity - needed) {
        int header[4] = { colocated, start, end, token_length };
        memcpy(writer->buffer + writer->length, header, sizeof header);
        memcpy(writer->buffer + writer->length + TOKEN_RECORD_HEADER, token, (size_t)token_length);
    }
    writer->length += needed;
    return 0;
}

int searchlight_prepare_tokens(const char *text, int length, unsigned char *buffer, int capacity) {
    Tokenizer *tokenizer = this_thread_tokenizer();
    if (!tokenizer) return -1;
    StreamWriter writer = { buffer, capacity, 0 };
    // As FTS5 tokenizes documents: words and identifiers' parts.
    int rc = tokenize_with(tokenizer, text, length, 1, &writer, stream_emit);
    return rc < 0 ? -1 : writer.length;
}

// MARK: streams from shared values

// A value of a joined text: its bytes, and (for the reference) the run of its records in the stream.
typedef struct Value {
    int start, end;
    int runStart, runEnd;
    unsigned long long hash;
} Value;

// A stream writer that moves every token's byte range by `shift` (a value tokenized alone, placed in its text).
typedef struct ShiftedWriter {
    StreamWriter *writer;
    int shift;
} ShiftedWriter;

static int shifted_emit(void *context, const char *token, int token_length, int start, int end, int colocated) {
    ShiftedWriter *shifted = context;
    return stream_emit(shifted->writer, token, token_length, start + shifted->shift, end + shifted->shift, colocated);
}

// The values of a text joined by U+001F; NULL when memory runs out.
static Value *split_values(const char *text, int length, int *count) {
    int values = 1;
    for (int i = 0; i < length; i++) values += text[i] == 0x1F;
    Value *result = calloc((size_t)values, sizeof(Value));
    if (!result) return NULL;
    int value = 0, start = 0;
    for (int i = 0; i <= length; i++) {
        if (i < length && text[i] != 0x1F) continue;
        unsigned long long hash = 1469598103934665603ULL;  // FNV-1a
        for (int j = start; j < i; j++) { hash ^= (unsigned char)text[j]; hash *= 1099511628211ULL; }
        result[value++] = (Value){ start, i, 0, 0, hash };
        start = i + 1;
    }
    *count = values;
    return result;
}

static int holds_joiner(const char *text, int length) {
    for (int i = 0; i + 2 < length; i++) {
        if ((unsigned char)text[i] == 0xE2 && (unsigned char)text[i + 1] == 0x80 && (unsigned char)text[i + 2] == 0x8D) return 1;
    }
    return 0;
}

// What the tokens of each value depend on, and the one exception, are in the header. The reference's
// records are assigned to its values by their start (records come in text order, so each value's are one
// run); a record that crosses a separator makes the splice refuse.
int searchlight_prepare_tokens_sharing(const char *text, int length, const char *reference, int referenceLength,
                                       const unsigned char *referenceStream, int referenceStreamLength,
                                       unsigned char *buffer, int capacity) {
    if (length < 0 || referenceLength < 0 || referenceStreamLength < 0) return -1;
    if (holds_joiner(text, length) || holds_joiner(reference, referenceLength)) return -2;
    Tokenizer *tokenizer = this_thread_tokenizer();
    if (!tokenizer) return -1;
    int referenceCount = 0, textCount = 0;
    Value *references = split_values(reference, referenceLength, &referenceCount);
    Value *values = references ? split_values(text, length, &textCount) : NULL;
    if (!values) { free(references); return -1; }
    int result = -2;
    int at = 0, value = 0, status;
    TokenRecord record;
    while (1) {
        int recordStart = at;
        if ((status = token_stream_next(referenceStream, referenceStreamLength, &at, &record)) != 1) break;
        while (value < referenceCount && record.start >= references[value].end) value++;
        if (value == referenceCount || record.start < references[value].start || record.end > references[value].end) { status = -1; break; }
        if (references[value].runEnd == references[value].runStart) references[value].runStart = recordStart;
        references[value].runEnd = at;
    }
    if (status == 0) {
        StreamWriter writer = { buffer, capacity, 0 };
        result = 0;
        for (int v = 0; v < textCount && result == 0; v++) {
            const Value *own = &values[v];
            int size = own->end - own->start, shared = -1;
            for (int r = 0; r < referenceCount && shared < 0; r++) {
                const Value *candidate = &references[r];
                if (candidate->hash == own->hash && candidate->end - candidate->start == size
                    && (size == 0 || memcmp(reference + candidate->start, text + own->start, (size_t)size) == 0)) shared = r;
            }
            if (shared >= 0) {
                // The shared value's records, moved from where it stands in the reference to where it stands here.
                int shift = own->start - references[shared].start, run = references[shared].runStart;
                while (run < references[shared].runEnd && token_stream_next(referenceStream, references[shared].runEnd, &run, &record) == 1) {
                    stream_emit(&writer, record.token, record.length, record.start + shift, record.end + shift, record.colocated);
                }
            } else if (size > 0) {
                ShiftedWriter shifted = { &writer, own->start };
                if (tokenize_with(tokenizer, text + own->start, size, 1, &shifted, shifted_emit) < 0) result = -1;
            }
        }
        if (result == 0) result = writer.length;
    }
    free(references);
    free(values);
    return result;
}
