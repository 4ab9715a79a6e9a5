package mcpserver

import (
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/api"
	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/platform"
)

// The input schemas are inferred from the Go argument types (the client's types for the
// per-platform objects, so their fields are the contract's), then given what inference cannot
// see: enums, bounds and descriptions. Limits enforced by the API (text lengths, counted each
// platform's way) are stated in descriptions, not repeated as schema limits: the API is the one
// place that checks them, and it names the field at fault.

const publishDescription = `Publish or schedule one short vertical video to channels of a reelay project. Answers a post_id and each destination's state.

Video: video_url, a public http(s) link to an MP4, MOV or WebM file up to 100 MB%s.
Where: channel_ids (from reelay_list_channels), or platforms, meaning the project's channels on those platforms; default platforms: youtube, instagram, tiktok.
Text: title at most 100 characters (YouTube's title; also the text of platforms given no other), caption at most 5000 characters (the default text everywhere). Both are optional: without title or youtube.title, YouTube's title is made from the caption's first line, else the video's file name, and each destination's "derived" says which texts reelay filled in. Each platform has its own limits for text, video size and duration: see each channel's capabilities in reelay_list_channels, and set per-platform text in the platform objects (youtube, tiktok, bluesky, ...). scheduled_for (RFC 3339 with offset, in the future) publishes later; omit it to publish now.
TikTok: mode defaults to "inbox": the video goes to the creator's TikTok inbox and the destination ends "sent_to_inbox", which is a success but not public until the creator finishes the post in the TikTok app. Use tiktok.mode "direct" to publish at once. Set tiktok.is_aigc true for AI-made videos.
Timing: reelay answers once the destinations settle or after a wait (15 s by default; wait_seconds 0-60). An answer with status "processing" or destinations "queued"/"uploading"/"processing" is NOT a failure: poll reelay_get_post with the post_id until it settles. Never call reelay_publish_post again because a poll timed out or the outcome is unknown: the post exists and it would be posted twice.
Repeating: calling again with exactly the same arguments is safe; without idempotency_key a key is derived from the arguments, so the repeat answers the first post (replayed: true) for 24 h instead of publishing again. To publish the same content again on purpose, change idempotency_key, and set allow_duplicate within 10 minutes of the first.
Each post uses one unit of the account's monthly allowance; status "failed" means no destination succeeded, with each platform's own error.`

const videoPathLocal = `A video file on this computer (an absolute path, or relative to where reelay mcp runs): MP4, MOV or WebM, up to 100 MB, streamed to the reelay server. Use it instead of video_url.`

const videoPathRemote = `Not available on this connection: the tools run on the reelay server, which cannot read files on your computer. Give video_url, a public link, instead (or run the tools locally with ` + "`reelay mcp`" + `, which takes a path).`

const thumbnailPathLocal = `A cover image file on this computer (an absolute path, or relative to where reelay mcp runs): JPEG, PNG or WebP, up to 10 MB, streamed to the reelay server with the video (video_path or video_url). Use it instead of thumbnail_url.`

const thumbnailPathRemote = `Not available on this connection: the tools run on the reelay server, which cannot read files on your computer. Give thumbnail_url, a public link, instead (or run the tools locally with ` + "`reelay mcp`" + `, which takes a path).`

const getPostDescription = `Read a post and each destination's outcome: published, upload_status, url, error.
Post status: scheduled (waiting for its time), processing (some destination not settled yet: read it again later, or pass wait_seconds to wait here up to 60 s), published (every destination published or sent to the TikTok inbox), partially_published (some failed), failed (none succeeded), canceled.
Destination upload_status: queued, uploading, processing (in progress), published, sent_to_inbox (TikTok inbox mode: delivered, public only after the creator finishes the post in the TikTok app), failed (error holds the platform's message, error_category its kind; auth_expired means the channel must be reconnected), canceled.
If a post is still processing when you stop polling, its outcome is unknown: report the post_id; do not publish the same content again.`

const listChannelsDescription = `List the connected channels (social accounts) of a project: id, platform, name, username, status and capabilities.
status "active" can publish; "reauth_required" means the platform refused its credentials and its owner must reconnect it.
capabilities are the platform's limits to respect when publishing: text lengths per field (capabilities.text, with the unit each platform counts in), video size, duration and formats, and which analytics it gives.
Use the ids as channel_ids in reelay_publish_post.`

const listProjectsDescription = `List the account's projects: id, name, description. Channels and posts belong to a project; pass its id as project_id (projectId for analytics) to the other tools.`

const analyticsDescription = `Totals of the account's published posts, with a per-platform breakdown: views, likes, comments, impressions, shares, reach, saves, watch time, and the number of posts.
The figures are the stored ones (refreshed by a periodic sync); sync: true reads fresh figures from the platforms first, which takes up to about 25 s.
A figure that no platform counted gives is null ("n/a"): unavailable, not zero (Bluesky gives no views, YouTube no impressions, Telegram nothing).
Filters: projectId, startDate and endDate (YYYY-MM-DD, UTC, both included, by publication date), platform.`

// platformDocs are the descriptions of the per-platform objects of a publish and of some of
// their fields; the names are the contract's. Enums, and the descriptions of fields not
// listed, come from the contract (contractObject), so that a field added to a platform's
// object needs no line here.
var platformDocs = map[string]struct {
	desc   string
	fields map[string]fieldDoc
}{
	"youtube": {"YouTube Shorts settings.", map[string]fieldDoc{
		"title":          {desc: "Video title, at most 100 characters, without < or >. Default: title, else the caption's first line, else the video's file name."},
		"description":    {desc: "Video description, at most 5000 bytes, without < or >. Default: caption."},
		"privacy_status": {desc: "Default: public."},
		"made_for_kids":  {desc: "Default: false."},
		"category_id":    {desc: "Video category id, one of those the channel's options list. Default: 22 (People & Blogs)."},
	}},
	"instagram": {"Instagram Reels settings.", map[string]fieldDoc{
		"caption":       {desc: "Caption, at most 2200 characters, 30 hashtags and 20 @-mentions. Default: caption."},
		"share_to_feed": {desc: "Also show the Reel in the profile's feed. Default: true."},
	}},
	"tiktok": {"TikTok settings.", map[string]fieldDoc{
		"mode":          {desc: `Default: "inbox": sent to the creator's TikTok app, where the creator must finish the post; the destination ends sent_to_inbox, not published. "direct": published at once.`},
		"title":         {desc: "Post text, at most 2200 UTF-16 units. Default: caption."},
		"privacy_level": {desc: "Must be one the creator allows (TikTok's creator settings). Default: PUBLIC_TO_EVERYONE."},
		"is_aigc":       {desc: "Must be true when the video was made with AI tools. Default: false."},
		"allow_comment": {desc: "Default: true."},
		"allow_duet":    {desc: "Default: true."},
		"allow_stitch":  {desc: "Default: true."},
	}},
	"linkedin": {"LinkedIn settings.", map[string]fieldDoc{
		"commentary": {desc: "Post text, at most 3000 characters. Default: caption."},
		"title":      {desc: "Video title, at most 200 characters. Default: title."},
	}},
	"pinterest": {"Pinterest settings.", map[string]fieldDoc{
		"title":       {desc: "Pin title, at most 100 characters. Default: title."},
		"description": {desc: "Pin description, at most 500 characters. Default: caption."},
		"link":        {desc: "Destination link of the Pin (http or https)."},
		"board_id":    {desc: "Board to pin to; required by Pinterest (the channel's options list its boards)."},
	}},
	"threads": {"Threads settings.", map[string]fieldDoc{
		"text": {desc: "Post text, at most 500 characters. Default: caption."},
	}},
	"facebook": {"Facebook Page video settings.", map[string]fieldDoc{
		"description": {desc: "Video description, at most 5000 characters. Default: caption."},
		"title":       {desc: "Video title, at most 200 characters. Default: title."},
	}},
	"bluesky": {"Bluesky settings.", map[string]fieldDoc{
		"text": {desc: "Post text, at most 300 graphemes and 3000 bytes. Default: caption."},
	}},
	"telegram": {"Telegram settings.", map[string]fieldDoc{
		"caption": {desc: "Video caption, at most 1024 characters. Default: caption."},
	}},
	"discord": {"Discord settings.", map[string]fieldDoc{
		"content": {desc: "Message sent with the video, at most 2000 characters. Default: caption."},
	}},
	"mastodon": {"Mastodon settings.", map[string]fieldDoc{
		"text":         {desc: "Status text, at most 500 characters with spoiler_text (the instance may allow another number). Default: caption."},
		"visibility":   {desc: "Who sees the status. Default: public."},
		"sensitive":    {desc: "Hide the video behind a warning. Default: false (true with a spoiler_text)."},
		"spoiler_text": {desc: "Content warning shown before the status."},
		"language":     {desc: "ISO 639-1 code of the status's language, such as en."},
		"description":  {desc: "Alt text of the video, at most 1500 characters."},
	}},
	"reddit": {"Reddit settings.", map[string]fieldDoc{
		"title":      {desc: "Post title, at most 300 characters. Default: title."},
		"subreddit":  {desc: "Target subreddit name, without r/."},
		"nsfw":       {desc: "Default: false."},
		"spoiler":    {desc: "Default: false."},
		"flair_id":   {desc: "One of the subreddit's link flair templates; some subreddits refuse posts without flair."},
		"flair_text": {desc: "Flair text, for an editable flair template; at most 64 characters."},
	}},
}

// fieldDoc is a field's description as the tool says it to a model, where it says more (or
// more briefly) than the contract; a field without one takes the contract's description.
type fieldDoc struct {
	desc string
}

// contract is the API's contract, read once.
var contract = sync.OnceValue(func() *openapi3.T {
	doc, err := api.Load()
	if err != nil {
		panic(fmt.Sprintf("mcpserver: %v", err))
	}
	return doc
})

// contractObject is the contract's schema of a platform's object (youtube: YouTubeOptions).
func contractObject(platform string) *openapi3.Schema {
	ref := contract().Components.Schemas["PublishRequest"].Value.Properties[platform]
	if ref == nil || ref.Value == nil {
		panic(fmt.Sprintf("mcpserver: the contract has no %s object", platform))
	}
	return ref.Value
}

// anySlice is a list of choices as a schema enum.
func anySlice(choices []string) []any {
	out := make([]any, len(choices))
	for i, c := range choices {
		out[i] = c
	}
	return out
}

// platformEnum is the platforms as a schema enum.
func platformEnum(extra ...any) []any {
	out := make([]any, 0, len(client.Platforms)+len(extra))
	for _, p := range client.Platforms {
		out = append(out, string(p))
	}
	return append(out, extra...)
}

// toolDefinitions builds the five tools' definitions for one mode.
func toolDefinitions(localFiles bool) map[string]*mcp.Tool {
	yes, no := true, false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}

	publishIn := inputSchema[PublishInput]()
	videoPathDoc, videoHint, thumbnailPathDoc := videoPathRemote, "", thumbnailPathRemote
	if localFiles {
		videoPathDoc, videoHint, thumbnailPathDoc = videoPathLocal, ", or video_path, a file on this computer", thumbnailPathLocal
	}
	property(publishIn, "video_path").Description = videoPathDoc
	property(publishIn, "thumbnail_path").Description = thumbnailPathDoc
	property(publishIn, "platforms").Items.Enum = platformEnum()
	property(publishIn, "platforms").MinItems = new(1)
	property(publishIn, "fit").Enum = anySlice(platform.FitChoices)
	property(publishIn, "transcode").Enum = anySlice(conform.TranscodeChoices)
	wait := property(publishIn, "wait_seconds")
	wait.Minimum, wait.Maximum = new(0.0), new(60.0)
	for name, doc := range platformDocs {
		obj := property(publishIn, name)
		obj.Description = doc.desc
		contract := contractObject(name)
		for field, p := range obj.Properties {
			c, ok := contract.Properties[field]
			if !ok {
				panic(fmt.Sprintf("mcpserver: %s.%s is not in the contract", name, field))
			}
			p.Description, p.Enum = c.Value.Description, c.Value.Enum
			if fd, ok := doc.fields[field]; ok {
				p.Description = fd.desc
			}
		}
		for field := range doc.fields {
			if _, ok := obj.Properties[field]; !ok {
				panic(fmt.Sprintf("mcpserver: %s.%s is documented but not a field", name, field))
			}
		}
	}

	getPostIn := inputSchema[GetPostInput]()
	w := property(getPostIn, "wait_seconds")
	w.Minimum, w.Maximum = new(0.0), new(60.0)

	analyticsIn := inputSchema[AnalyticsInput]()
	property(analyticsIn, "platform").Enum = platformEnum("all")
	for _, d := range []string{"startDate", "endDate"} {
		property(analyticsIn, d).Pattern = `^\d{4}-\d{2}-\d{2}$`
	}

	return map[string]*mcp.Tool{
		ToolPublishPost: {
			Name: ToolPublishPost, Title: "Publish a video",
			Description: fmt.Sprintf(publishDescription, videoHint),
			InputSchema: publishIn, OutputSchema: outputSchema[PublishResult](),
			// Not read-only, not destructive (it adds a post, changes nothing existing),
			// idempotent (a repeated call answers the first post), and it reaches the platforms.
			Annotations: &mcp.ToolAnnotations{Title: "Publish a video", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes},
		},
		ToolGetPost: {
			Name: ToolGetPost, Title: "Read a post", Description: getPostDescription,
			InputSchema: getPostIn, OutputSchema: outputSchema[client.Post](), Annotations: readOnly,
		},
		ToolListChannels: {
			Name: ToolListChannels, Title: "List channels", Description: listChannelsDescription,
			InputSchema: inputSchema[ListChannelsInput](), OutputSchema: outputSchema[client.ChannelList](), Annotations: readOnly,
		},
		ToolListProjects: {
			Name: ToolListProjects, Title: "List projects", Description: listProjectsDescription,
			InputSchema: inputSchema[ListProjectsInput](), OutputSchema: outputSchema[ProjectList](), Annotations: readOnly,
		},
		ToolGetAnalytics: {
			Name: ToolGetAnalytics, Title: "Get analytics", Description: analyticsDescription,
			InputSchema: analyticsIn, OutputSchema: outputSchema[AnalyticsResult](),
			// sync reads the platforms, but changes nothing anyone sees.
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes},
		},
	}
}

// inputSchema infers the schema of a tool's arguments. Optional objects and numbers are
// pointers in Go, which inference turns into "null or ..."; a model sends null for "not
// given" as often as it leaves a field out, and both mean the default.
func inputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err))
	}
	return s
}

func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: output schema: %v", err))
	}
	return s
}

// property is the schema of an object's property; a missing one is a programming error.
func property(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("mcpserver: schema has no property " + name)
	}
	return p
}
