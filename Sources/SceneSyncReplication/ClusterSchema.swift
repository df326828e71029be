/// The database layout (docs/replication.md), created on first connection, and the one function a push calls.
///
/// Every push runs `<schema>.push_batch(…)`: one statement, so one transaction and one round trip for up to
/// ``ClusterReplicator/pushBatchLimit`` changes. It takes the scenes' row locks, then the single `meta` row's lock to
/// number the changes: sequences are handed out in commit order, so a reader that has seen sequence N has seen every
/// change numbered below it, and the feed's cursor never skips one.
enum ClusterSchema {
    /// The `LISTEN`/`NOTIFY` channel; the payload of each notification is the new sequence.
    static func channel(_ schema: String) -> String { "\(schema)_changes" }

    /// Idempotent, and serialized by an advisory lock so that hosts starting together do not race on `CREATE`.
    static func statements(_ s: String) -> [String] {
        [
            "SELECT pg_advisory_xact_lock(hashtext('\(s)'))",
            "CREATE SCHEMA IF NOT EXISTS \(s)",
            """
            CREATE TABLE IF NOT EXISTS \(s).meta (
                id integer PRIMARY KEY CHECK (id = 1),
                seq bigint NOT NULL)
            """,
            "INSERT INTO \(s).meta VALUES (1, 0) ON CONFLICT DO NOTHING",
            """
            CREATE TABLE IF NOT EXISTS \(s).scenes (
                scene text PRIMARY KEY,
                content bytea,
                format text NOT NULL,
                version bigint NOT NULL,
                seq bigint NOT NULL,
                host text NOT NULL,
                origin text NOT NULL,
                changed_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TABLE IF NOT EXISTS \(s).log (
                seq bigint PRIMARY KEY,
                scene text NOT NULL,
                version bigint NOT NULL,
                content bytea,
                format text NOT NULL,
                host text NOT NULL,
                stream text NOT NULL,
                push bigint NOT NULL,
                origin text NOT NULL,
                conflict_content bytea,
                conflict_format text,
                conflict_host text,
                conflict_origin text,
                changed_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX IF NOT EXISTS log_push ON \(s).log (host, stream, push)",
            """
            CREATE TABLE IF NOT EXISTS \(s).hosts (
                host text PRIMARY KEY,
                stream text NOT NULL,
                last_push bigint NOT NULL,
                seen_at timestamptz NOT NULL DEFAULT now())
            """,
            pushBatchFunction(s),
        ]
    }

    /// Pushes a batch of one host's changes, in push order, in one statement: one transaction and one round trip.
    /// Returns one row per change: its push number, the committed (or earlier) sequence and version, and what
    /// happened: `committed`, `unchanged` (the database already holds that content) or `duplicate` (a retry of a
    /// push whose answer was lost; a retried batch may hold new changes after the duplicates).
    ///
    /// Deadlocks are avoided by one lock order for every push: the host's own row, then the batch's existing scene
    /// rows in name order, then `meta` (taken at the first commit, held to the end). The single-change `push(…)` of
    /// earlier versions locks one scene, then `meta`, so hosts of both versions may share a database. Because
    /// `meta` is held for the rest of the batch, its committed sequences are consecutive.
    ///
    /// A change's base is the cluster version the host last knew, except for a second change to a scene within the
    /// batch: its base is the version the first just committed (as if pushed one at a time). One `NOTIFY` per
    /// batch, with the highest sequence: the feed reads a payload as "everything up to here is committed". When
    /// they fit (PostgreSQL's limit is 8,000 bytes), the batch's log rows follow the sequence after a space, as JSON,
    /// so that the other hosts need not read them back.
    private static func pushBatchFunction(_ s: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(s).push_batch(
            p_host text, p_stream text, p_pushes bigint[], p_scenes text[], p_deleted boolean[], p_contents bytea[],
            p_formats text[], p_origins text[], p_bases bigint[], p_keep bigint, p_channel text)
        RETURNS TABLE (r_push bigint, r_seq bigint, r_version bigint, r_state text)
        LANGUAGE plpgsql AS $fn$
        DECLARE
            h \(s).hosts%ROWTYPE;
            cur \(s).scenes%ROWTYPE;
            known boolean;
            top_push bigint;
            first_seq bigint := 0;
            next_seq bigint := 0;
            next_version bigint;
            push_base bigint;
            bases jsonb := '{}'::jsonb;
            new_content bytea;
            had boolean;
            overwrites boolean;
            rows jsonb := '[]'::jsonb;
            i integer;
        BEGIN
            SELECT * INTO h FROM \(s).hosts WHERE host = p_host FOR UPDATE;
            known := FOUND AND h.stream = p_stream;
            IF NOT FOUND THEN
                INSERT INTO \(s).hosts (host, stream, last_push) VALUES (p_host, p_stream, 0);
            END IF;
            top_push := CASE WHEN known THEN h.last_push ELSE 0 END;
            PERFORM 1 FROM \(s).scenes WHERE scene = ANY (p_scenes) ORDER BY scene FOR UPDATE;
            FOR i IN 1 .. COALESCE(array_length(p_pushes, 1), 0) LOOP
                r_push := p_pushes[i];
                IF known AND top_push >= p_pushes[i] THEN
                    SELECT l.seq, l.version INTO r_seq, r_version FROM \(s).log l
                        WHERE l.host = p_host AND l.stream = p_stream AND l.push = p_pushes[i];
                    IF NOT FOUND THEN
                        r_seq := 0;
                        r_version := 0;
                    END IF;
                    r_state := 'duplicate';
                ELSE
                    top_push := p_pushes[i];
                    new_content := CASE WHEN p_deleted[i] THEN NULL ELSE p_contents[i] END;
                    push_base := COALESCE((bases ->> p_scenes[i])::bigint, p_bases[i]);
                    SELECT * INTO cur FROM \(s).scenes WHERE scene = p_scenes[i];
                    had := FOUND;
                    IF (had AND cur.content IS NOT DISTINCT FROM new_content
                            AND (new_content IS NULL OR cur.format = p_formats[i]))
                        OR (NOT had AND new_content IS NULL) THEN
                        r_seq := COALESCE(cur.seq, 0);
                        r_version := COALESCE(cur.version, 0);
                        r_state := 'unchanged';
                    ELSE
                        IF first_seq = 0 THEN
                            SELECT seq INTO next_seq FROM \(s).meta WHERE id = 1 FOR UPDATE;
                            first_seq := next_seq + 1;
                        END IF;
                        next_seq := next_seq + 1;
                        next_version := COALESCE(cur.version, 0) + 1;
                        overwrites := had AND push_base < cur.version AND cur.content IS NOT NULL;
                        INSERT INTO \(s).log (seq, scene, version, content, format, host, stream, push, origin,
                            conflict_content, conflict_format, conflict_host, conflict_origin)
                        VALUES (next_seq, p_scenes[i], next_version, new_content, p_formats[i], p_host, p_stream,
                            p_pushes[i], p_origins[i],
                            CASE WHEN overwrites THEN cur.content END, CASE WHEN overwrites THEN cur.format END,
                            CASE WHEN overwrites THEN cur.host END, CASE WHEN overwrites THEN cur.origin END);
                        INSERT INTO \(s).scenes (scene, content, format, version, seq, host, origin, changed_at)
                        VALUES (p_scenes[i], new_content, p_formats[i], next_version, next_seq, p_host, p_origins[i], now())
                        ON CONFLICT (scene) DO UPDATE SET content = EXCLUDED.content, format = EXCLUDED.format,
                            version = EXCLUDED.version, seq = EXCLUDED.seq, host = EXCLUDED.host,
                            origin = EXCLUDED.origin, changed_at = EXCLUDED.changed_at;
                        r_seq := next_seq;
                        r_version := next_version;
                        r_state := 'committed';
                        IF rows IS NOT NULL THEN
                            rows := rows || jsonb_build_array(jsonb_build_object(
                                'q', next_seq, 's', p_scenes[i], 'v', next_version, 'c', encode(new_content, 'hex'),
                                'f', p_formats[i], 'o', p_origins[i],
                                'cc', CASE WHEN overwrites THEN encode(cur.content, 'hex') END,
                                'cf', CASE WHEN overwrites THEN cur.format END,
                                'ch', CASE WHEN overwrites THEN cur.host END,
                                'co', CASE WHEN overwrites THEN cur.origin END));
                            IF octet_length(rows::text) > 7000 THEN
                                rows := NULL;
                            END IF;
                        END IF;
                    END IF;
                END IF;
                IF r_version > 0 THEN
                    bases := bases || jsonb_build_object(p_scenes[i], r_version);
                END IF;
                RETURN NEXT;
            END LOOP;
            UPDATE \(s).hosts SET stream = p_stream, last_push = top_push, seen_at = now() WHERE host = p_host;
            IF first_seq > 0 THEN
                UPDATE \(s).meta SET seq = next_seq WHERE id = 1;
                IF next_seq / 64 > (first_seq - 1) / 64 THEN
                    DELETE FROM \(s).log WHERE seq <= next_seq - p_keep;
                END IF;
                PERFORM pg_notify(p_channel, next_seq::text || CASE WHEN rows IS NULL THEN '' ELSE
                    ' ' || jsonb_build_object('h', p_host, 't', p_stream, 'r', rows)::text END);
            END IF;
        END
        $fn$
        """
    }
}
