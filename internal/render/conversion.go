package render

// Conversion says what Convert changes of a video to make a rendition that a platform
// accepts. Every rendition is an MP4 with its index (moov) at the front and no edit list; the
// zero Conversion changes nothing else, copying the streams as they are (a remux). The
// fields are compared and hashed to find renditions that can be shared, so two Conversions
// that mean the same must be equal: fields that do not apply stay zero.
type Conversion struct {
	// Video re-encodes the picture as H.264 High (libx264); false copies it.
	Video bool `json:"video,omitempty"`
	// FrameRate is the re-encoded picture's constant frame rate in frames per second; 0 keeps
	// the source's.
	FrameRate float64 `json:"frame_rate,omitempty"`
	// Width and Height are the re-encoded picture's size in pixels (even numbers), as it is
	// shown, after any rotation; 0 keeps the source's.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Fit says how a source of another aspect ratio than Width:Height fills the frame: FitPad
	// scales it to fit inside and fills the rest with black bars, FitCrop scales it to cover
	// the frame and cuts the overflow off equally on both sides. Empty when the ratio stays.
	Fit string `json:"fit,omitempty"`
	// VideoBitrate, when not 0, is the re-encoded picture's average bitrate in bits per second,
	// reached in two passes: how a file is made to fit a size limit. 0 encodes at constant
	// quality (CRF).
	VideoBitrate int64 `json:"video_bitrate,omitempty"`
	// MaxVideoBitrate, when not 0, caps the re-encoded picture's bitrate over any few seconds
	// (the encoder's VBV), in bits per second.
	MaxVideoBitrate int64 `json:"max_video_bitrate,omitempty"`
	// Audio re-encodes the sound as AAC-LC; false copies it. A source without sound stays
	// without.
	Audio bool `json:"audio,omitempty"`
	// AudioSampleRate (Hz) and AudioChannels of re-encoded sound; 0 keeps the source's.
	AudioSampleRate int `json:"audio_sample_rate,omitempty"`
	AudioChannels   int `json:"audio_channels,omitempty"`
}

// Ways a picture fills a frame of another aspect ratio (Conversion.Fit), named as the
// request's fit (platform.FitPad, platform.FitCrop) names them.
const (
	FitPad  = "pad"
	FitCrop = "crop"
)
