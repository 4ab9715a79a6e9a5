-- +goose Up
-- What the probe reads of a stored video beyond its size and shape, the facts platforms' media
-- rules look at: the codecs, the sound's channels and sample rate, the average and highest
-- frame rate, and whether an MP4/MOV has its moov box after the media data or carries an edit
-- list. Files stored before this migration read as unknown (empty, zero, false).
-- (Numbered 00020: 00019 is taken by the channel check on a branch being merged alongside.)
ALTER TABLE media ADD COLUMN video_codec TEXT NOT NULL DEFAULT '';
ALTER TABLE media ADD COLUMN audio_codec TEXT NOT NULL DEFAULT '';
ALTER TABLE media ADD COLUMN audio_channels INTEGER NOT NULL DEFAULT 0;
ALTER TABLE media ADD COLUMN audio_sample_rate INTEGER NOT NULL DEFAULT 0;
ALTER TABLE media ADD COLUMN frame_rate DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE media ADD COLUMN max_frame_rate DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE media ADD COLUMN moov_after_mdat BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE media ADD COLUMN edit_list BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE media DROP COLUMN edit_list;
ALTER TABLE media DROP COLUMN moov_after_mdat;
ALTER TABLE media DROP COLUMN max_frame_rate;
ALTER TABLE media DROP COLUMN frame_rate;
ALTER TABLE media DROP COLUMN audio_sample_rate;
ALTER TABLE media DROP COLUMN audio_channels;
ALTER TABLE media DROP COLUMN audio_codec;
ALTER TABLE media DROP COLUMN video_codec;
