package client

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reelay/reelay/api"
)

// The client's types are written by hand; these tests hold them to api/openapi.yaml, so that
// a field, parameter or operation changed on one side only fails here.

// contractType pairs a type the client sends or reads with its schema.
type contractType struct {
	schema string
	value  any
	// readsOnly: the type reads this schema's answers among others', so only "every property
	// of the schema has a field" is checked, not the converse.
	readsOnly bool
}

var contractTypes = []contractType{
	{schema: "Error", value: errorBody{}},
	{schema: "DeletedResponse", value: deletedResponse{}},
	{schema: "Health", value: health{}},
	{schema: "ErrorDetail", value: ErrorDetail{}},
	{schema: "Project", value: Project{}},
	{schema: "ProjectList", value: projectList{}},
	{schema: "CreateProjectRequest", value: CreateProjectRequest{}},
	{schema: "ProjectResponse", value: projectResponse{}},
	{schema: "Channel", value: Channel{}},
	{schema: "ChannelList", value: ChannelList{}},
	{schema: "SandboxBehavior", value: SandboxBehavior{}},
	{schema: "CreateChannelRequest", value: CreateChannelRequest{}},
	{schema: "ChannelResponse", value: channelResponse{}},
	{schema: "ChannelOptionsResponse", value: ChannelOptions{}},
	{schema: "ChannelCheckResponse", value: ChannelCheckResult{}},
	{schema: "ChannelCheck", value: ChannelCheck{}},
	{schema: "ConnectURLResponse", value: ConnectURL{}},
	{schema: "APIKey", value: APIKey{}},
	{schema: "APIKeyList", value: apiKeyList{}},
	{schema: "CreateAPIKeyRequest", value: CreateAPIKeyRequest{}},
	{schema: "APIKeyCreated", value: APIKeyCreated{}},
	{schema: "Usage", value: Usage{}},
	{schema: "CreditLedger", value: CreditLedger{}},
	{schema: "CreditEntry", value: CreditEntry{}},
	{schema: "YouTubeOptions", value: YouTubeOptions{}},
	{schema: "InstagramOptions", value: InstagramOptions{}},
	{schema: "TikTokOptions", value: TikTokOptions{}},
	{schema: "LinkedInOptions", value: LinkedInOptions{}},
	{schema: "PinterestOptions", value: PinterestOptions{}},
	{schema: "ThreadsOptions", value: ThreadsOptions{}},
	{schema: "FacebookOptions", value: FacebookOptions{}},
	{schema: "BlueskyOptions", value: BlueskyOptions{}},
	{schema: "TelegramOptions", value: TelegramOptions{}},
	{schema: "DiscordOptions", value: DiscordOptions{}},
	{schema: "MastodonOptions", value: MastodonOptions{}},
	{schema: "RedditOptions", value: RedditOptions{}},
	{schema: "PublishRequest", value: PublishRequest{}},
	{schema: "PublishResponse", value: PublishResponse{}},
	{schema: "DryRunResponse", value: DryRunResponse{}},
	{schema: "DryRunDestination", value: DryRunDestination{}},
	{schema: "MediaInfo", value: MediaInfo{}},
	{schema: "DestinationResult", value: DestinationResult{}},
	{schema: "Post", value: Post{}},
	{schema: "PostResponse", value: postResponse{}},
	{schema: "PostList", value: PostList{}},
	{schema: "UpdatePostRequest", value: UpdatePostRequest{}},
	{schema: "AnalyticsOverview", value: AnalyticsOverview{}},
	{schema: "PlatformMetrics", value: PlatformMetrics{}},
	{schema: "DestinationMetrics", value: DestinationMetrics{}},
	{schema: "MetricsList", value: MetricsList{}},
	{schema: "AnalyticsSyncRequest", value: SyncRequest{}},
	{schema: "AnalyticsSyncResponse", value: SyncSummary{}},
	{schema: "AnalyticsSyncSummary", value: SyncSummary{}},
	{schema: "SyncError", value: SyncError{}},
	{schema: "Comment", value: Comment{}},
	{schema: "CommentList", value: CommentList{}},
	{schema: "ReplyRequest", value: ReplyRequest{}},
	{schema: "ReplyResponse", value: replyResponse{}},
	{schema: "AdaptRequest", value: AdaptRequest{}},
	{schema: "AdaptResponse", value: AdaptResponse{}},
	{schema: "AdaptedCopy", value: AdaptedCopy{}},
	{schema: "StoryboardCreateRequest", value: StoryboardRequest{}},
	{schema: "StoryboardResponse", value: StoryboardResponse{}},
	{schema: "Storyboard", value: Storyboard{}},
	{schema: "StoryboardScene", value: StoryboardScene{}},
	{schema: "GenerateVideoRequest", value: GenerateVideoRequest{}},
	{schema: "StitchRequest", value: StitchRequest{}},
	{schema: "StitchScene", value: StitchScene{}},
	{schema: "GenerateVideoResponse", value: AIJob{}, readsOnly: true},
	{schema: "StitchResponse", value: AIJob{}, readsOnly: true},
	{schema: "AIJobAccepted", value: AIJob{}, readsOnly: true},
	{schema: "AIJob", value: AIJob{}},
	{schema: "Webhook", value: Webhook{}},
	{schema: "WebhookResponse", value: webhookResponse{}},
	{schema: "UpdateWebhookRequest", value: updateWebhookRequest{}},
	{schema: "CreateWebhookRequest", value: CreateWebhookRequest{}},
	{schema: "WebhookCreated", value: WebhookCreated{}},
	{schema: "WebhookList", value: webhookList{}},
	{schema: "WebhookDelivery", value: WebhookDelivery{}},
	{schema: "DeliveryList", value: DeliveryList{}},
	{schema: "SandboxIntrospection", value: SandboxIntrospection{}},
}

// ignoredProperties are schema properties no type needs a field for: "success" is true on
// every 2xx answer but a publish's, whose type has it.
var ignoredProperties = []string{"success"}

// operations maps each operation of the contract to the method that calls it, and to the
// type of its query parameters.
var operations = map[string]struct {
	method string
	query  any
	// linkQuery: the query comes whole in a link the server handed out.
	linkQuery bool
}{
	"listProjects":          {method: "ListProjects"},
	"createProject":         {method: "CreateProject"},
	"listChannels":          {method: "ListChannels", query: channelsQuery{}},
	"createChannel":         {method: "CreateChannel"},
	"deleteChannel":         {method: "DeleteChannel"},
	"getChannelOptions":     {method: "ChannelOptions", query: ChannelOptionsParams{}},
	"checkChannel":          {method: "CheckChannel"},
	"getChannelConnectURL":  {method: "ConnectURL", query: ConnectURLParams{}},
	"listAPIKeys":           {method: "ListAPIKeys"},
	"createAPIKey":          {method: "CreateAPIKey"},
	"revokeAPIKey":          {method: "RevokeAPIKey"},
	"getAccountUsage":       {method: "Usage"},
	"getAccountCredits":     {method: "Credits", query: ListParams{}},
	"publish":               {method: "Publish", query: publishQuery{}},
	"listPosts":             {method: "ListPosts", query: ListPostsParams{}},
	"getPost":               {method: "GetPost"},
	"updatePost":            {method: "UpdatePost"},
	"cancelPost":            {method: "CancelPost"},
	"retryPost":             {method: "RetryPost"},
	"getMedia":              {method: "OpenMedia", linkQuery: true},
	"getAnalyticsOverview":  {method: "AnalyticsOverview", query: AnalyticsParams{}},
	"listAnalyticsMetrics":  {method: "AnalyticsMetrics", query: MetricsParams{}},
	"syncAnalytics":         {method: "SyncAnalytics"},
	"listComments":          {method: "ListComments", query: ListCommentsParams{}},
	"replyToComment":        {method: "Reply"},
	"adaptScript":           {method: "Adapt"},
	"generateVideo":         {method: "GenerateVideo"},
	"createStoryboard":      {method: "CreateStoryboard"},
	"stitchStoryboard":      {method: "StitchStoryboard"},
	"getAIJob":              {method: "GetAIJob"},
	"listWebhooks":          {method: "ListWebhooks"},
	"createWebhook":         {method: "CreateWebhook"},
	"deleteWebhook":         {method: "DeleteWebhook"},
	"updateWebhook":         {method: "SetWebhookEnabled"},
	"listWebhookDeliveries": {method: "WebhookDeliveries", query: ListParams{}},
	"sandboxIntrospect":     {method: "SandboxIntrospect"},
	"healthz":               {method: "Health"},
}

// notCalled are the operations the client leaves out, and why.
var notCalled = map[string]string{
	"publishPost":   "an alias of publish",
	"oauthStart":    "the page a consent link leads to, for browsers",
	"oauthCallback": "the platform's redirect target, for browsers",
	"mcp":           "the agent-tool protocol, spoken by MCP clients",
	"getOpenAPI":    "the contract itself",
	"readyz":        "for orchestrators",
	"metrics":       "Prometheus text, for scrapers",
}

func loadContract(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := api.Load()
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestTypesMatchContract(t *testing.T) {
	doc := loadContract(t)
	for _, ct := range contractTypes {
		t.Run(ct.schema, func(t *testing.T) {
			ref, ok := doc.Components.Schemas[ct.schema]
			if !ok {
				t.Fatalf("the contract has no schema %s (renamed or removed?)", ct.schema)
			}
			typ := reflect.TypeOf(ct.value)
			checkType(t, typ.Name(), typ, ref.Value, ct.readsOnly)
		})
	}
}

// TestTypeCheckerCatchesDrift makes sure the check above can fail: a struct whose tag is not
// in its schema, and a schema property no field reads.
func TestTypeCheckerCatchesDrift(t *testing.T) {
	doc := loadContract(t)
	renamed := struct {
		ID        string    `json:"id"`
		Title     string    `json:"name_renamed"`
		CreatedAt time.Time `json:"created_at"`
	}{}
	rec := &recorder{}
	checkType(rec, "renamed", reflect.TypeOf(renamed), doc.Components.Schemas["Project"].Value, false)
	want := []string{"renamed.name_renamed", "property name", "property description"}
	for _, w := range want {
		if !slices.ContainsFunc(rec.errs, func(e string) bool { return strings.Contains(e, w) }) {
			t.Errorf("drift %q not reported; reports: %q", w, rec.errs)
		}
	}
	wrongKind := struct {
		ID string `json:"id"`
		N  int    `json:"name"`
	}{}
	rec = &recorder{}
	checkType(rec, "wrongKind", reflect.TypeOf(wrongKind), doc.Components.Schemas["Project"].Value, true)
	if len(rec.errs) == 0 || !strings.Contains(strings.Join(rec.errs, " "), "wrongKind.name") {
		t.Errorf("a field of the wrong kind is not reported: %q", rec.errs)
	}
}

// reporter is the part of testing.T the checker uses, so that it can be tested itself.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, strings.TrimSpace(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")))
}

// checkType checks a Go type against a schema: every json field is a property of the schema
// with a compatible type (recursively), and, unless readsOnly, every property has a field.
func checkType(t reporter, where string, typ reflect.Type, schema *openapi3.Schema, readsOnly bool) {
	t.Helper()
	props := properties(schema)
	fields := jsonFields(typ)
	names := map[string]bool{}
	for _, f := range fields {
		names[f.name] = true
		if readsOnly {
			continue
		}
		prop, ok := props[f.name]
		if !ok {
			t.Errorf("%s.%s: the field is not a property of the contract's schema", where, f.name)
			continue
		}
		checkValue(t, where+"."+f.name, f.typ, prop.Value)
	}
	for name, prop := range props {
		if slices.Contains(ignoredProperties, name) {
			continue
		}
		if !names[name] {
			t.Errorf("%s: the contract's property %s has no field", where, name)
			continue
		}
		if readsOnly {
			for _, f := range fields {
				if f.name == name {
					checkValue(t, where+"."+name, f.typ, prop.Value)
				}
			}
		}
	}
}

// checkValue checks one field's Go type against its property's schema.
func checkValue(t reporter, where string, typ reflect.Type, s *openapi3.Schema) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	is := func(name string) bool { return s.Type != nil && s.Type.Is(name) }
	mismatch := func() { t.Errorf("%s: Go type %s does not fit the contract's %v", where, typ, s.Type) }
	switch {
	case typ == reflect.TypeFor[time.Time]():
		if !is("string") || (s.Format != "date-time" && s.Format != "date") {
			mismatch()
		}
	case typ.Kind() == reflect.Interface:
		// Any JSON value.
	case typ.Kind() == reflect.String:
		if !is("string") {
			mismatch()
		}
	case typ.Kind() == reflect.Bool:
		if !is("boolean") {
			mismatch()
		}
	case typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64:
		if !is("integer") {
			mismatch()
		}
	case typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64:
		if !is("number") {
			mismatch()
		}
	case typ.Kind() == reflect.Slice:
		if !is("array") || s.Items == nil {
			mismatch()
			return
		}
		checkValue(t, where+"[]", typ.Elem(), s.Items.Value)
	case typ.Kind() == reflect.Map:
		if !isObject(s) {
			mismatch()
			return
		}
		if ap := s.AdditionalProperties.Schema; ap != nil {
			checkValue(t, where+"{}", typ.Elem(), ap.Value)
		} else if typ.Elem().Kind() != reflect.Interface {
			t.Errorf("%s: the contract leaves the object open; a map of %s claims more", where, typ.Elem())
		}
	case typ.Kind() == reflect.Struct:
		if !isObject(s) {
			mismatch()
			return
		}
		checkType(t, where, typ, s, false)
	default:
		mismatch()
	}
}

func isObject(s *openapi3.Schema) bool {
	return (s.Type != nil && s.Type.Is("object")) || len(s.Properties) > 0 || len(s.AllOf) > 0
}

// properties are a schema's own and its allOf parts'.
func properties(s *openapi3.Schema) openapi3.Schemas {
	out := openapi3.Schemas{}
	for _, part := range s.AllOf {
		for k, v := range properties(part.Value) {
			out[k] = v
		}
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	return out
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the members a struct encodes to, embedded structs flattened.
func jsonFields(typ reflect.Type) []jsonField {
	var out []jsonField
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	return out
}

// TestMultipartFieldsMatchContract: an upload sends each member of the JSON body as a form
// field, so every PublishRequest member must be a field of the multipart schema, and the
// files go under its names.
func TestMultipartFieldsMatchContract(t *testing.T) {
	doc := loadContract(t)
	props := properties(doc.Components.Schemas["PublishMultipartRequest"].Value)
	for _, f := range jsonFields(reflect.TypeFor[PublishRequest]()) {
		if _, ok := props[f.name]; !ok {
			t.Errorf("PublishRequest.%s is not a field of PublishMultipartRequest", f.name)
		}
	}
	for _, file := range []string{"video", "thumbnail"} {
		if s, ok := props[file]; !ok || s.Value.Format != "binary" {
			t.Errorf("the contract has no file field %q", file)
		}
	}
}

// TestOperationsCovered: every operation of the contract has a method (or a reason not to),
// the method exists, and each query parameter type names exactly the operation's parameters.
func TestOperationsCovered(t *testing.T) {
	doc := loadContract(t)
	clientType := reflect.TypeFor[*Client]()
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for verb, op := range item.Operations() {
			id := op.OperationID
			seen[id] = true
			cov, ok := operations[id]
			if !ok {
				if _, skipped := notCalled[id]; !skipped {
					t.Errorf("%s %s (%s) has no client method", verb, path, id)
				}
				continue
			}
			if _, ok := clientType.MethodByName(cov.method); !ok {
				t.Errorf("%s: Client has no method %s", id, cov.method)
			}
			if !cov.linkQuery {
				checkQuery(t, id, op, cov.query)
			}
			checkSchemasListed(t, id, op)
		}
	}
	for id := range operations {
		if !seen[id] {
			t.Errorf("operation %s is not in the contract any more", id)
		}
	}
	for id := range notCalled {
		if !seen[id] {
			t.Errorf("operation %s (not called) is not in the contract any more", id)
		}
	}
	publish := doc.Paths.Find("/publish").Post
	for _, h := range []string{"Idempotency-Key", "Prefer"} {
		if publish.Parameters.GetByInAndName("header", h) == nil {
			t.Errorf("publish has no %s header in the contract", h)
		}
	}
	if doc.Paths.Find("/inbox/reply").Post.Parameters.GetByInAndName("header", "Idempotency-Key") == nil {
		t.Error("reply has no Idempotency-Key header in the contract")
	}
}

// checkQuery compares a parameter type's query tags with the operation's query parameters.
func checkQuery(t *testing.T, id string, op *openapi3.Operation, params any) {
	t.Helper()
	want := map[string]bool{}
	for _, p := range op.Parameters {
		if p.Value.In == "query" {
			want[p.Value.Name] = true
		}
	}
	got := map[string]bool{}
	if params != nil {
		for _, name := range queryNames(reflect.TypeOf(params)) {
			got[name] = true
			if !want[name] {
				t.Errorf("%s: the client sends query parameter %q, which the contract does not have", id, name)
			}
		}
	}
	for name := range want {
		if !got[name] {
			t.Errorf("%s: the contract's query parameter %q has no field", id, name)
		}
	}
}

func queryNames(typ reflect.Type) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name := f.Tag.Get("query")
		if f.Anonymous && name == "" {
			out = append(out, queryNames(f.Type)...)
		} else if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// checkSchemasListed: the JSON schemas an operation takes and answers (2xx) are all in
// contractTypes, so that a new answer shape cannot go unchecked.
func checkSchemasListed(t *testing.T, id string, op *openapi3.Operation) {
	t.Helper()
	listed := func(ref string) bool {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		return slices.ContainsFunc(contractTypes, func(ct contractType) bool { return ct.schema == name })
	}
	var refs []*openapi3.SchemaRef
	if op.RequestBody != nil {
		if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
			refs = append(refs, mt.Schema)
		}
	}
	for code, resp := range op.Responses.Map() {
		if !strings.HasPrefix(code, "2") || resp.Value == nil {
			continue
		}
		if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			refs = append(refs, mt.Schema)
		}
	}
	for _, r := range refs {
		candidates := []*openapi3.SchemaRef{r}
		if r.Ref == "" {
			candidates = r.Value.OneOf
		}
		for _, c := range candidates {
			if c.Ref == "" {
				continue // an inline or open object (the contract document, the MCP message)
			}
			if !listed(c.Ref) {
				t.Errorf("%s uses %s, which no client type is checked against", id, c.Ref)
			}
		}
	}
}
