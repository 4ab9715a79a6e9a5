package connect

// The OAuth 2.0 client side of the platforms that connect by consent. golang.org/x/oauth2
// covers the standard flows, but three of the eight platforms step outside them (TikTok names the
// client "client_key"; Meta's token endpoints answer Graph errors and extend tokens through their
// own grant types; Threads even on another path), so one small table-driven client here speaks
// all eight, each quirk written down next to its platform.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/platform/reddit"
	"github.com/reelay/reelay/internal/provider"
)

// dialect is how one platform's authorization server is spoken to.
type dialect struct {
	authURL, tokenURL string
	scopes            []string
	scopeSep          string
	clientParam       string // "client_id", or TikTok's "client_key"
	basicAuth         bool   // client credentials in an Authorization: Basic header (Pinterest, Reddit)
	// userAgent is sent with every token call where the platform throttles an HTTP library's
	// default one (Reddit's, the same as its API calls carry).
	userAgent  string
	pkce       bool
	authParams map[string]string
	// Meta: a short-lived token is exchanged for a long-lived one at exchangeURL (grant
	// exchangeGrant, token in exchangeParam), and a long-lived one is extended at refreshURL (grant
	// refreshGrant) or, where there is none (Facebook Login), by exchanging it again.
	meta                                     bool
	exchangeURL, exchangeGrant, exchangeParm string
	refreshURL, refreshGrant                 string
	// pages: the user's token is traded for the tokens of the Facebook Pages they manage, one
	// channel each (Page tokens derived from a long-lived user token do not expire).
	pages bool
}

// graphVersion is the Graph API version of Facebook Login's endpoints.
const graphVersion = "v26.0"

var dialects = map[string]dialect{
	"youtube": {
		authURL: "https://accounts.google.com/o/oauth2/v2/auth", tokenURL: "https://oauth2.googleapis.com/token",
		scopes: []string{"https://www.googleapis.com/auth/youtube.upload", "https://www.googleapis.com/auth/youtube.readonly",
			"https://www.googleapis.com/auth/youtube.force-ssl", "https://www.googleapis.com/auth/yt-analytics.readonly"},
		scopeSep: " ", clientParam: "client_id", pkce: true,
		// offline + consent: Google answers a refresh token only so, and only on a consent.
		authParams: map[string]string{"access_type": "offline", "prompt": "consent", "include_granted_scopes": "true"},
	},
	"tiktok": {
		authURL: "https://www.tiktok.com/v2/auth/authorize/", tokenURL: "https://open.tiktokapis.com/v2/oauth/token/",
		scopes:   []string{"user.info.basic", "video.publish", "video.upload", "video.list"},
		scopeSep: ",", clientParam: "client_key",
	},
	"linkedin": {
		authURL: "https://www.linkedin.com/oauth/v2/authorization", tokenURL: "https://www.linkedin.com/oauth/v2/accessToken",
		scopes: []string{"openid", "profile", "w_member_social"}, scopeSep: " ", clientParam: "client_id",
	},
	"pinterest": {
		authURL: "https://www.pinterest.com/oauth/", tokenURL: "https://api.pinterest.com/v5/oauth/token",
		scopes:   []string{"boards:read", "pins:read", "pins:write", "user_accounts:read"},
		scopeSep: ",", clientParam: "client_id", basicAuth: true,
	},
	"reddit": {
		authURL: "https://www.reddit.com/api/v1/authorize", tokenURL: "https://www.reddit.com/api/v1/access_token",
		scopes:   []string{"identity", "submit", "read", "mysubreddits", "flair"},
		scopeSep: " ", clientParam: "client_id", basicAuth: true, userAgent: reddit.DefaultUserAgent,
		authParams: map[string]string{"duration": "permanent"},
	},
	"instagram": {
		authURL:  "https://www.facebook.com/" + graphVersion + "/dialog/oauth",
		tokenURL: "https://graph.facebook.com/" + graphVersion + "/oauth/access_token",
		scopes: []string{"instagram_basic", "instagram_content_publish", "instagram_manage_comments",
			"instagram_manage_insights", "pages_show_list", "pages_read_engagement"},
		scopeSep: ",", clientParam: "client_id", meta: true,
		exchangeURL: "https://graph.facebook.com/" + graphVersion + "/oauth/access_token", exchangeGrant: "fb_exchange_token", exchangeParm: "fb_exchange_token",
	},
	"facebook": {
		authURL:  "https://www.facebook.com/" + graphVersion + "/dialog/oauth",
		tokenURL: "https://graph.facebook.com/" + graphVersion + "/oauth/access_token",
		scopes: []string{"pages_show_list", "pages_read_engagement", "pages_manage_posts", "pages_manage_engagement",
			"pages_read_user_engagement"},
		scopeSep: ",", clientParam: "client_id", meta: true, pages: true,
		exchangeURL: "https://graph.facebook.com/" + graphVersion + "/oauth/access_token", exchangeGrant: "fb_exchange_token", exchangeParm: "fb_exchange_token",
	},
	"threads": {
		authURL: "https://threads.net/oauth/authorize", tokenURL: "https://graph.threads.net/oauth/access_token",
		scopes: []string{"threads_basic", "threads_content_publish", "threads_read_replies", "threads_manage_replies",
			"threads_manage_insights"},
		scopeSep: ",", clientParam: "client_id", meta: true,
		exchangeURL: "https://graph.threads.net/access_token", exchangeGrant: "th_exchange_token", exchangeParm: "access_token",
		refreshURL: "https://graph.threads.net/refresh_access_token", refreshGrant: "th_refresh_token",
	},
}

// OAuthPlatform reports whether platform connects through an OAuth consent.
func OAuthPlatform(platform string) bool {
	_, ok := dialects[platform]
	return ok
}

// Client is an OAuth app.
type Client struct {
	ID, Secret string
}

// token is a token endpoint's answer.
type token struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int64  `json:"expires_in"`
	Scope        string `json:"scope"`
	OpenID       string `json:"open_id"` // TikTok
}

// at rewrites one of the dialect's URLs for the server at root ("" = the platform itself): a
// simulator serves every endpoint below its mount point, at the real path.
func at(root, real string) string {
	if root == "" {
		return real
	}
	u, _ := url.Parse(real)
	return root + u.Path
}

// authCodeURL is the consent page to send the user to.
func (d dialect) authCodeURL(root string, c Client, redirectURI, state, challenge string) string {
	v := url.Values{}
	v.Set(d.clientParam, c.ID)
	v.Set("redirect_uri", redirectURI)
	v.Set("response_type", "code")
	v.Set("scope", strings.Join(d.scopes, d.scopeSep))
	v.Set("state", state)
	if challenge != "" {
		v.Set("code_challenge", challenge)
		v.Set("code_challenge_method", "S256")
	}
	for k, val := range d.authParams {
		v.Set(k, val)
	}
	return at(root, d.authURL) + "?" + v.Encode()
}

// exchange trades an authorization code for a token, and a Meta short-lived token for a
// long-lived one.
func (d dialect) exchange(ctx context.Context, hc *http.Client, root string, c Client, code, redirectURI, verifier string) (token, error) {
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}
	if verifier != "" {
		v.Set("code_verifier", verifier)
	}
	t, err := d.post(ctx, hc, at(root, d.tokenURL), c, v)
	if err != nil || !d.meta {
		return t, err
	}
	return d.longLived(ctx, hc, root, c, t.AccessToken)
}

// longLived exchanges a Meta token for a long-lived one (60 days).
func (d dialect) longLived(ctx context.Context, hc *http.Client, root string, c Client, accessToken string) (token, error) {
	v := url.Values{"grant_type": {d.exchangeGrant}, "client_secret": {c.Secret}, d.exchangeParm: {accessToken}}
	if d.exchangeGrant == "fb_exchange_token" {
		v.Set("client_id", c.ID)
	}
	return d.get(ctx, hc, at(root, d.exchangeURL)+"?"+v.Encode())
}

// refresh renews an access token: the refresh-token grant, or Meta's extension of a
// long-lived token that is still valid.
func (d dialect) refresh(ctx context.Context, hc *http.Client, root string, c Client, creds map[string]string) (token, error) {
	switch {
	case d.refreshURL != "":
		v := url.Values{"grant_type": {d.refreshGrant}, "access_token": {creds["access_token"]}}
		return d.get(ctx, hc, at(root, d.refreshURL)+"?"+v.Encode())
	case d.meta:
		return d.longLived(ctx, hc, root, c, creds["access_token"])
	case creds["refresh_token"] == "":
		return token{}, provider.Permanent(provider.CategoryAuthExpired, 0, "the channel has no refresh token; reconnect it")
	}
	return d.post(ctx, hc, at(root, d.tokenURL), c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {creds["refresh_token"]}})
}

func (d dialect) post(ctx context.Context, hc *http.Client, endpoint string, c Client, v url.Values) (token, error) {
	if !d.basicAuth {
		v.Set(d.clientParam, c.ID)
		v.Set("client_secret", c.Secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(v.Encode()))
	if err != nil {
		return token{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if d.basicAuth {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	return d.do(hc, req)
}

func (d dialect) get(ctx context.Context, hc *http.Client, endpoint string) (token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return token{}, err
	}
	req.Header.Set("Accept", "application/json")
	return d.do(hc, req)
}

// do sends a token request and classifies its failure: a refused grant or client is permanent
// (auth_expired: the user must consent again), a platform in trouble transient.
func (d dialect) do(hc *http.Client, req *http.Request) (token, error) {
	if d.userAgent != "" {
		req.Header.Set("User-Agent", d.userAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return token{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "token endpoint: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return token{}, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "token endpoint: %v", err)
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return token{}, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "token endpoint answered %s", resp.Status)
	}
	var t token
	var e struct {
		Error       json.RawMessage `json:"error"`
		Description string          `json:"error_description"`
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != http.StatusOK || len(e.Error) > 0 {
		return token{}, provider.Permanent(provider.CategoryAuthExpired, resp.StatusCode, "%s", describeOAuthError(e.Error, e.Description, resp.Status))
	}
	if err := json.Unmarshal(body, &t); err != nil || t.AccessToken == "" {
		return token{}, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "token endpoint answered no access token")
	}
	return t, nil
}

// describeOAuthError reads RFC 6749's {"error": "code", "error_description"} and Meta's
// {"error": {"message"}} alike.
func describeOAuthError(raw json.RawMessage, desc, status string) string {
	var code string
	if json.Unmarshal(raw, &code) == nil && code != "" {
		if desc != "" {
			return code + ": " + desc
		}
		return code
	}
	var graph struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &graph) == nil && graph.Message != "" {
		return graph.Message
	}
	return status
}

// expiry turns expires_in into a time (nil when the platform gave none: a token that does
// not expire).
func (t token) expiry(now time.Time) *time.Time {
	if t.ExpiresIn <= 0 {
		return nil
	}
	// Microseconds, as PostgreSQL keeps them: the channel Refresh answers must compare equal
	// to the one stored, or the next Refresh takes it for another process's newer token.
	e := now.Add(time.Duration(t.ExpiresIn) * time.Second).UTC().Truncate(time.Microsecond)
	return &e
}

// page is a Facebook Page the user manages, with its Page token.
type page struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	AccessToken string `json:"access_token"`
}

// pages lists the user's Pages with their tokens (GET /me/accounts), following Graph's cursors.
func pages(ctx context.Context, hc *http.Client, apiBase, userToken string) ([]page, error) {
	graph := metagraph.New("Facebook", apiBase, userToken, hc)
	q := url.Values{"fields": {"id,name,access_token"}, "limit": {"100"}}
	var out []page
	for len(out) < 1000 {
		var body struct {
			Data   []page `json:"data"`
			Paging struct {
				Cursors struct {
					After string `json:"after"`
				} `json:"cursors"`
				Next string `json:"next"`
			} `json:"paging"`
		}
		if err := graph.Get(ctx, "/me/accounts", q, &body); err != nil {
			return nil, metagraph.Classifier{Platform: "Facebook"}.Classify(err)
		}
		out = append(out, body.Data...)
		if body.Paging.Next == "" || body.Paging.Cursors.After == "" {
			break
		}
		q.Set("after", body.Paging.Cursors.After)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: this Facebook user manages no Page (Reels are published as a Page)", errNothingToConnect)
	}
	return out, nil
}
