/// The database layout (README, "Several hosts"), created on first connection, and the one function a push calls.
///
/// Every push runs `<schema>.push(…)`: one statement, so one transaction and one round trip. It takes the scene's
/// row lock, then the single `meta` row's lock to number the change: sequences are handed out in commit order, so a
/// reader that has seen sequence N has seen every change numbered below it, and the feed's cursor never skips one.
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
            pushFunction(s),
        ]
    }

    /// Returns the committed (or earlier) sequence and version and what happened: `committed`, `unchanged` (the
    /// database already holds that content) or `duplicate` (a retry of a push whose answer was lost).
    private static func pushFunction(_ s: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(s).push(
            p_host text, p_stream text, p_push bigint, p_scene text, p_content bytea, p_format text,
            p_origin text, p_base bigint, p_keep bigint, p_channel text)
        RETURNS TABLE (r_seq bigint, r_version bigint, r_state text)
        LANGUAGE plpgsql AS $fn$
        DECLARE
            h \(s).hosts%ROWTYPE;
            cur \(s).scenes%ROWTYPE;
            had boolean;
            next_seq bigint;
            next_version bigint;
            overwrites boolean;
        BEGIN
            SELECT * INTO h FROM \(s).hosts WHERE host = p_host FOR UPDATE;
            IF NOT FOUND THEN
                INSERT INTO \(s).hosts (host, stream, last_push) VALUES (p_host, p_stream, 0);
            ELSIF h.stream = p_stream AND h.last_push >= p_push THEN
                RETURN QUERY
                    SELECT l.seq, l.version, 'duplicate'::text FROM \(s).log l
                    WHERE l.host = p_host AND l.stream = p_stream AND l.push = p_push;
                IF NOT FOUND THEN
                    RETURN QUERY SELECT 0::bigint, 0::bigint, 'duplicate'::text;
                END IF;
                RETURN;
            END IF;
            UPDATE \(s).hosts SET stream = p_stream, last_push = p_push, seen_at = now() WHERE host = p_host;
            SELECT * INTO cur FROM \(s).scenes WHERE scene = p_scene FOR UPDATE;
            had := FOUND;
            IF (had AND cur.content IS NOT DISTINCT FROM p_content AND (p_content IS NULL OR cur.format = p_format))
                OR (NOT had AND p_content IS NULL) THEN
                RETURN QUERY SELECT COALESCE(cur.seq, 0), COALESCE(cur.version, 0), 'unchanged'::text;
                RETURN;
            END IF;
            UPDATE \(s).meta SET seq = seq + 1 WHERE id = 1 RETURNING seq INTO next_seq;
            next_version := COALESCE(cur.version, 0) + 1;
            overwrites := had AND p_base < cur.version AND cur.content IS NOT NULL;
            INSERT INTO \(s).log (seq, scene, version, content, format, host, stream, push, origin,
                conflict_content, conflict_format, conflict_host, conflict_origin)
            VALUES (next_seq, p_scene, next_version, p_content, p_format, p_host, p_stream, p_push, p_origin,
                CASE WHEN overwrites THEN cur.content END, CASE WHEN overwrites THEN cur.format END,
                CASE WHEN overwrites THEN cur.host END, CASE WHEN overwrites THEN cur.origin END);
            INSERT INTO \(s).scenes (scene, content, format, version, seq, host, origin, changed_at)
            VALUES (p_scene, p_content, p_format, next_version, next_seq, p_host, p_origin, now())
            ON CONFLICT (scene) DO UPDATE SET content = EXCLUDED.content, format = EXCLUDED.format,
                version = EXCLUDED.version, seq = EXCLUDED.seq, host = EXCLUDED.host, origin = EXCLUDED.origin,
                changed_at = EXCLUDED.changed_at;
            IF next_seq % 64 = 0 THEN
                DELETE FROM \(s).log WHERE seq <= next_seq - p_keep;
            END IF;
            PERFORM pg_notify(p_channel, next_seq::text);
            RETURN QUERY SELECT next_seq, next_version, 'committed'::text;
        END
        $fn$
        """
    }
}
