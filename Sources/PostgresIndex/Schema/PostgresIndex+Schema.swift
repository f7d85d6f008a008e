#if PostgreSQL
import PostgresNIO
import SearchIndex

extension PostgresIndex {
    /// The schema this build writes and reads.
    public static let schemaVersion = 4

    /// Each version's script, applied in order inside one transaction. Never edit one that shipped: add the next.
    static let migrations: [String] = [
        """
        CREATE EXTENSION IF NOT EXISTS postgis;
        CREATE TABLE searchlight_stores (
            uuid text PRIMARY KEY,
            path text NOT NULL,
            token bigint NOT NULL,
            token_timestamp double precision,
            model_digest text,
            configuration_digest text,
            configuration text,
            entity_parents text,
            export_state text,
            updated_at double precision NOT NULL,
            -- The ranking's statistics, kept per store so that concurrent writers of different stores never
            -- touch one row: items, and the positions of each column over them.
            items bigint NOT NULL DEFAULT 0,
            name_positions bigint NOT NULL DEFAULT 0,
            title_positions bigint NOT NULL DEFAULT 0,
            text_positions bigint NOT NULL DEFAULT 0,
            keyword_positions bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE searchlight_items (
            uri text PRIMARY KEY,
            store_uuid text NOT NULL,
            entity text NOT NULL,
            display_name text NOT NULL,
            title text NOT NULL,
            text text NOT NULL,
            keywords text NOT NULL,
            latitude double precision,
            longitude double precision,
            place geography(Point, 4326),
            date double precision,
            rank double precision NOT NULL,
            value_lengths text NOT NULL,
            attributes text NOT NULL,
            digest text NOT NULL,
            name_positions integer NOT NULL,
            title_positions integer NOT NULL,
            text_positions integer NOT NULL,
            keyword_positions integer NOT NULL,
            terms tsvector NOT NULL
        );
        CREATE INDEX searchlight_items_terms ON searchlight_items USING gin (terms);
        CREATE INDEX searchlight_items_place ON searchlight_items USING gist (place);
        CREATE INDEX searchlight_items_latitude ON searchlight_items (latitude) WHERE latitude IS NOT NULL;
        CREATE INDEX searchlight_items_store ON searchlight_items (store_uuid);
        CREATE INDEX searchlight_items_entity ON searchlight_items (entity, uri);
        CREATE TABLE searchlight_shown_values (
            uri text PRIMARY KEY,
            store_uuid text NOT NULL,
            digest text NOT NULL
        );
        CREATE INDEX searchlight_shown_values_store ON searchlight_shown_values (store_uuid);
        """,
        // 2: rebuilds that keep a store searchable. A rebuild raises its store's generation; every item is
        // written with its store's generation, and the rebuild's sweep removes the items of older ones.
        """
        ALTER TABLE searchlight_stores ADD COLUMN generation bigint NOT NULL DEFAULT 0;
        ALTER TABLE searchlight_items ADD COLUMN generation bigint NOT NULL DEFAULT 0;
        CREATE INDEX searchlight_items_store_generation ON searchlight_items (store_uuid, generation);
        DROP INDEX searchlight_items_store;
        """,
        // 3: filters, orders and facets read attribute rows, one per value, as the SQLite index's
        // `item_attributes` (text in byte order, as SQLite's BINARY collation; folded texts are filled in by
        // ``foldAttributeTexts()``, in Swift); typo tolerance walks the index's terms. The terms table has no unique key on purpose: concurrent writers add terms
        // without waiting on one another (a term two of them add at once is held twice, read once).
        """
        CREATE TABLE searchlight_attributes (
            uri text NOT NULL REFERENCES searchlight_items (uri) ON DELETE CASCADE,
            name text NOT NULL,
            kind smallint NOT NULL,
            number double precision,
            text text COLLATE "C",
            -- The text folded as [c], [d] and [cd] compare it (Foundation's folding, done by the writer).
            text_c text COLLATE "C",
            text_d text COLLATE "C",
            text_cd text COLLATE "C"
        );
        CREATE INDEX searchlight_attributes_item ON searchlight_attributes (uri, name);
        CREATE INDEX searchlight_attributes_number ON searchlight_attributes (name, number);
        CREATE INDEX searchlight_attributes_text ON searchlight_attributes (name, text) WHERE text IS NOT NULL;
        INSERT INTO searchlight_attributes (uri, name, kind, number, text)
        SELECT i.uri, split_part(p.pair, '=', 1), v.kind, v.number, v.text
        FROM searchlight_items i
        CROSS JOIN LATERAL unnest(string_to_array(i.attributes, E'\\x1D')) AS p(pair)
        CROSS JOIN LATERAL unnest(string_to_array(substr(p.pair, strpos(p.pair, '=') + 1), E'\\x1E')) AS e(value)
        -- Only what reads as a value: a text, or a finite number or date (a malformed one is left out, never
        -- cast into an error that would stop every exporter at this migration).
        CROSS JOIN LATERAL (SELECT CASE left(e.value, 1) WHEN 's' THEN 0 WHEN 'n' THEN 1 ELSE 2 END AS kind,
                                   CASE WHEN left(e.value, 1) IN ('n', 'd')
                                         AND substr(e.value, 2) ~ '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$'
                                        THEN substr(e.value, 2)::double precision END AS number,
                                   CASE WHEN left(e.value, 1) = 's' THEN substr(e.value, 2) END AS text) v
        WHERE i.attributes <> '' AND strpos(p.pair, '=') > 0 AND (v.text IS NOT NULL OR v.number IS NOT NULL)
          AND (v.number IS NULL OR v.number NOT IN ('Infinity'::float8, '-Infinity'::float8));
        CREATE TABLE searchlight_terms (term text COLLATE "C" NOT NULL);
        CREATE INDEX searchlight_terms_term ON searchlight_terms (term);
        INSERT INTO searchlight_terms (term)
        SELECT word FROM ts_stat('SELECT terms FROM searchlight_items') WHERE char_length(word) >= \(TypoPlan.minimumTermLength);
        """,
        // 4: a related object whose change reaches more items than a page has them re-indexed a page at a
        // time beside the history after it; how far that went, as the SQLite index's `deferred_dependents`.
        """
        CREATE TABLE searchlight_deferred_dependents (
            uri text PRIMARY KEY,
            store_uuid text NOT NULL,
            progress text NOT NULL
        );
        CREATE INDEX searchlight_deferred_dependents_store ON searchlight_deferred_dependents (store_uuid);
        """,
    ]

    /// Creates or migrates the schema; many exporters starting at once take turns (a transaction-scoped
    /// advisory lock), and a database newer than this build is refused, never downgraded.
    func migrate() async throws(PostgresIndexError) {
        try await Self.execute("BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('searchlight schema', 0));", on: connection)
        do {
            try await Self.execute("CREATE TABLE IF NOT EXISTS searchlight_schema (version integer NOT NULL)", on: connection)
            let current = try await value("SELECT max(version) FROM searchlight_schema", as: Int.self) ?? 0
            guard current <= Self.schemaVersion else { throw PostgresIndexError.schemaTooNew(found: current, supported: Self.schemaVersion) }
            for version in (current + 1)..<(Self.schemaVersion + 1) {
                try await Self.execute(Self.migrations[version - 1], on: connection)
                if version == 3 { try await foldAttributeTexts() }
                try await Self.execute("INSERT INTO searchlight_schema (version) VALUES (\(version))", on: connection)
            }
            try await Self.execute("COMMIT", on: connection)
        } catch {
            try? await Self.execute("ROLLBACK", on: connection)
            throw Self.mapped(error)
        }
    }

    /// Folds the texts of attribute rows that migration 3 read out of existing items, as the writer folds
    /// new ones: Foundation's folding has no equal in SQL. Each distinct text is folded once.
    func foldAttributeTexts() async throws(PostgresIndexError) {
        let texts = try await rows("SELECT DISTINCT text FROM searchlight_attributes WHERE kind = 0 AND text_c IS NULL")
            .map { row throws(PostgresIndexError) in try Self.decode(row, as: String.self) }
        for start in stride(from: 0, to: texts.count, by: 10_000) {
            let chunk = Array(texts[start..<min(start + 10_000, texts.count)])
            var bindings = PostgresBindings()
            bindings.append(chunk)
            for options in 1...3 { bindings.append(chunk.map { SearchIndex.fold($0, options: options) }) }
            _ = try await rows("""
                UPDATE searchlight_attributes a SET text_c = u.c, text_d = u.d, text_cd = u.cd
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(t, c, d, cd)
                WHERE a.kind = 0 AND a.text_c IS NULL AND a.text = u.t
                """, bindings)
        }
    }

    /// Checks that the database holds an index this build reads; returns its schema version.
    func checkSchema() async throws(PostgresIndexError) -> Int {
        let exists = try await value("SELECT to_regclass('searchlight_schema') IS NOT NULL", as: Bool.self) ?? false
        guard exists else { throw .notAnIndex(location: location) }
        let version = try await value("SELECT max(version) FROM searchlight_schema", as: Int.self)
        guard let version, version >= 1 else { throw .notAnIndex(location: location) }
        guard version <= Self.schemaVersion else { throw .schemaTooNew(found: version, supported: Self.schemaVersion) }
        return version
    }

    /// Refuses a database not encoded as UTF-8 (a C-locale `initdb` makes SQL_ASCII ones): term lengths,
    /// prefixes and typo windows are counted in characters, which such a database counts as bytes.
    func checkEncoding() async throws(PostgresIndexError) {
        let encoding = try await value("SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()", as: String.self) ?? "UTF8"
        guard encoding == "UTF8" else { throw .notUTF8(location: location, encoding: encoding) }
    }
}
#endif
