package mcpserver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/reelay/reelay/client"
)

// GetPostInput is reelay_get_post's arguments.
type GetPostInput struct {
	PostID      string `json:"post_id" jsonschema:"The post_id a publish answered."`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"Wait up to this many seconds (0 to 60) for the post to settle before answering, reading it with back-off. Default: 0, answer at once."`
}

func (t *tools) getPost(ctx context.Context, api *client.Client, in GetPostInput) (answer[client.Post], error) {
	var none answer[client.Post]
	id := strings.TrimSpace(in.PostID)
	if id == "" {
		return none, badArgument("post_id", "required: the post_id a publish answered")
	}
	var post *client.Post
	var err error
	if in.WaitSeconds > 0 {
		post, err = waitPost(ctx, api, id, time.Duration(in.WaitSeconds)*time.Second)
	} else {
		post, err = api.GetPost(ctx, id)
	}
	if err != nil {
		return none, err
	}
	return answer[client.Post]{Value: *post, Summary: postSummary(post)}, nil
}

// waitPost reads the post until it settles or wait runs out; running out is not an error:
// the post is answered as it stands.
func waitPost(ctx context.Context, api *client.Client, id string, wait time.Duration) (*client.Post, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	post, err := api.WaitPost(wctx, id)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		if post != nil {
			return post, nil
		}
		// The wait ran out during a read: read once more without it.
		return api.GetPost(ctx, id)
	}
	return post, err
}

// ListChannelsInput is reelay_list_channels' arguments.
type ListChannelsInput struct {
	ProjectID string `json:"project_id,omitempty" jsonschema:"Id of the project (reelay_list_projects). May be left out when the account has exactly one project."`
}

func (t *tools) listChannels(ctx context.Context, api *client.Client, in ListChannelsInput) (answer[client.ChannelList], error) {
	list, err := api.ListChannels(ctx, strings.TrimSpace(in.ProjectID))
	if err != nil {
		return answer[client.ChannelList]{}, err
	}
	return answer[client.ChannelList]{Value: *list, Summary: channelsSummary(list)}, nil
}

// ListProjectsInput is reelay_list_projects' arguments: none.
type ListProjectsInput struct{}

// ProjectList is reelay_list_projects' answer.
type ProjectList struct {
	Projects []client.Project `json:"projects"`
}

func (t *tools) listProjects(ctx context.Context, api *client.Client, _ ListProjectsInput) (answer[ProjectList], error) {
	projects, err := api.ListProjects(ctx)
	if err != nil {
		return answer[ProjectList]{}, err
	}
	out := ProjectList{Projects: projects}
	if out.Projects == nil {
		out.Projects = []client.Project{}
	}
	return answer[ProjectList]{Value: out, Summary: projectsSummary(out.Projects)}, nil
}

// AnalyticsInput is reelay_get_analytics' arguments: the query of GET /analytics/overview, and
// sync to read fresh figures first (POST /analytics/sync).
type AnalyticsInput struct {
	ProjectID string          `json:"projectId,omitempty" jsonschema:"Only this project's posts. Default: every project of the account."`
	StartDate string          `json:"startDate,omitempty" jsonschema:"First day counted, YYYY-MM-DD (UTC), by publication date."`
	EndDate   string          `json:"endDate,omitempty" jsonschema:"Last day counted, YYYY-MM-DD (UTC), included."`
	Platform  client.Platform `json:"platform,omitempty" jsonschema:"Only this platform. Default: all."`
	Sync      bool            `json:"sync,omitempty" jsonschema:"Read fresh figures from the platforms before adding them up (takes up to about 25 s). Default: false, the stored figures, which a periodic sync refreshes."`
}

// AnalyticsResult is reelay_get_analytics' answer: the overview, and the sync's summary when
// one ran first.
type AnalyticsResult struct {
	client.AnalyticsOverview
	Sync *client.SyncSummary `json:"sync,omitempty" jsonschema:"What the sync read, when sync was asked for."`
}

func (t *tools) getAnalytics(ctx context.Context, api *client.Client, in AnalyticsInput) (answer[AnalyticsResult], error) {
	var out AnalyticsResult
	if in.Sync {
		sum, err := api.SyncAnalytics(ctx, client.SyncRequest{})
		if err != nil {
			return answer[AnalyticsResult]{}, err
		}
		out.Sync = sum
	}
	platform := in.Platform
	if platform == "all" {
		platform = ""
	}
	ov, err := api.AnalyticsOverview(ctx, client.AnalyticsParams{ProjectID: strings.TrimSpace(in.ProjectID),
		StartDate: in.StartDate, EndDate: in.EndDate, Platform: platform})
	if err != nil {
		return answer[AnalyticsResult]{}, err
	}
	out.AnalyticsOverview = *ov
	return answer[AnalyticsResult]{Value: out, Summary: analyticsSummary(out)}, nil
}
