package facebook

import (
	"github.com/reelay/reelay/internal/platform/metagraph"
)

// codeVideoUpload is a problem with the video file (the reels publishing guide); its subcode
// says which: 1363040 aspect ratio, 1363127 resolution, 1363128 duration, 1363129 frame rate.
const codeVideoUpload = 6000

// classify turns a failed call into a *provider.Error: metagraph's table, with 6000 (the video
// file) as media_rejected.
var classify = metagraph.Classifier{
	Platform:           "Facebook",
	MediaRejectedCodes: []int{codeVideoUpload},
}.Classify
