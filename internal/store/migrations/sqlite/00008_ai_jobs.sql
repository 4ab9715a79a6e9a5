-- +goose Up
-- ai_jobs are the long AI requests (POST /ai/generate-video, POST /ai/storyboard/stitch), worked
-- by River jobs and read at GET /ai/jobs/{id}. A row is written in the same transaction as its
-- credit reservation and its River job, so that work, credits and job exist together or not at
-- all; it leaves 'running' exactly once, closing the reservation in the same transaction.
--   input        the validated request as JSON (never a key)
--   provider_key a video provider key the request gave (apiKey), sealed by internal/secret; set
--                to NULL when the job ends, so it is kept only while the work needs it
--   progress     what the work has done that must not be done again after a restart (the
--                provider requests already submitted), as JSON
--   result       once succeeded: the stored video's key and the answer's other fields, as JSON
--   error        once failed: the error body's status, code, message and fields, as JSON
CREATE TABLE ai_jobs (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('generate_video', 'storyboard_stitch')),
    status         TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    input          TEXT NOT NULL,
    provider_key   BLOB,
    progress       TEXT NOT NULL DEFAULT '{}',
    result         TEXT,
    error          TEXT,
    reservation_id TEXT REFERENCES credit_reservations (id) ON DELETE SET NULL,
    credits        INTEGER NOT NULL DEFAULT 0,
    created_at     TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL,
    finished_at    TIMESTAMP
);
CREATE INDEX ai_jobs_account_idx ON ai_jobs (account_id, created_at);

-- +goose Down
DROP TABLE ai_jobs;
