package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sendonce"
	"github.com/reelay/reelay/internal/provider"
)

// Bot API objects that the provider reads (core.telegram.org/bots/api#available-types).

// User is a Telegram user or bot (getMe).
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username"`
}

// Chat is a chat as getChat (ChatFullInfo) and Message.chat describe it.
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"` // private, group, supergroup or channel
	Title    string `json:"title"`
	Username string `json:"username"`
}

// ChatMember is what getChatMember answers; the rights are those of ChatMemberAdministrator and
// ChatMemberRestricted (absent for the other statuses).
type ChatMember struct {
	Status          string `json:"status"` // creator, administrator, member, restricted, left, kicked
	User            User   `json:"user"`
	CanPostMessages *bool  `json:"can_post_messages"`
	CanSendVideos   *bool  `json:"can_send_videos"`
	IsMember        *bool  `json:"is_member"`
}

type message struct {
	MessageID int64 `json:"message_id"`
	Chat      Chat  `json:"chat"`
	Video     *struct {
		FileID string `json:"file_id"`
	} `json:"video"`
	Document *struct {
		FileID string `json:"file_id"`
	} `json:"document"`
}

// envelope is every Bot API answer: {"ok":true,"result":...} or
// {"ok":false,"error_code":N,"description":"...","parameters":{"retry_after":N}}.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// apiError is an answer of the Bot API with "ok": false. It is a definite answer: the request
// did not take effect.
type apiError struct {
	Method      string
	Status      int
	Code        int
	Description string
	RetryAfter  time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Telegram %s: %s (error %d)", e.Method, e.Description, e.Code)
}

// publishError classifies a Bot API error. Telegram's descriptions are stable strings
// ("Bad Request: chat not found", "Forbidden: bot is not a member of the channel chat", ...),
// and the HTTP status equals error_code.
func (e *apiError) publishError() *provider.Error {
	msg := e.Error()
	d := strings.ToLower(e.Description)
	code := e.Code
	if code == 0 {
		code = e.Status
	}
	switch {
	case code == http.StatusTooManyRequests:
		ra := e.RetryAfter
		if ra <= 0 {
			ra = 5 * time.Second
		}
		return provider.Transient(provider.CategoryRateLimited, e.Status, ra, "%s", msg)
	case code == http.StatusUnauthorized || code == http.StatusNotFound:
		// 401 is a revoked or unknown token; 404 "Not Found" is a token of the wrong shape.
		return provider.Permanent(provider.CategoryAuthExpired, e.Status,
			"%s: the bot token was refused; create a new one with @BotFather and reconnect the channel", msg)
	case code == http.StatusForbidden:
		// The bot was removed from the channel, blocked, or lost the right to post: the
		// channel's connection no longer works until someone fixes it on Telegram, which is
		// what reauth_required asks for (invalid_options would point at the post instead).
		return provider.Permanent(provider.CategoryAuthExpired, e.Status,
			"%s: add the bot to the chat as an administrator allowed to post messages", msg)
	case code == http.StatusRequestEntityTooLarge:
		return provider.Permanent(provider.CategoryMediaRejected, e.Status, "%s", msg)
	case code >= 500:
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.Status, e.RetryAfter, "%s", msg)
	case code == http.StatusBadRequest:
		switch {
		case strings.Contains(d, "chat not found"), strings.Contains(d, "caption"),
			strings.Contains(d, "parse"), strings.Contains(d, "entit"), strings.Contains(d, "chat_id"),
			strings.Contains(d, "not enough rights"), strings.Contains(d, "upgraded to a supergroup"):
			return provider.Permanent(provider.CategoryInvalidOptions, e.Status, "%s", msg)
		case strings.Contains(d, "video"), strings.Contains(d, "file"), strings.Contains(d, "thumb"),
			strings.Contains(d, "photo"), strings.Contains(d, "too big"), strings.Contains(d, "dimension"),
			strings.Contains(d, "media"):
			return provider.Permanent(provider.CategoryMediaRejected, e.Status, "%s", msg)
		}
		return provider.Permanent(provider.CategoryInvalidOptions, e.Status, "%s", msg)
	}
	return provider.Permanent(provider.CategoryInternal, e.Status, "%s", msg)
}

// client calls the Bot API with one bot token. The token is part of every URL
// (/bot{token}/{method}), as the Bot API requires, so no error text ever carries a URL.
type client struct {
	base    string
	token   string
	hc      *http.Client
	timeout time.Duration
	now     func() time.Time
}

func (c client) endpoint(method string) string {
	return c.base + "/bot" + c.token + "/" + method
}

// call POSTs form parameters to a method and decodes its result into out.
func (c client) call(ctx context.Context, method string, params url.Values, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(method), strings.NewReader(params.Encode()))
	if err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "Telegram %s: building the request failed", method)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.hc.Do(req)
	if err != nil {
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Telegram %s: %v", method, provider.WithoutURL(err))
	}
	defer resp.Body.Close()
	return c.decode(resp, method, out)
}

// decode reads a Bot API answer: its result into out, or an *apiError. An answer that is not
// the Bot API's JSON is a transient *provider.Error.
func (c client) decode(resp *http.Response, method string, out any) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "Telegram %s: reading the answer: %v", method, provider.WithoutURL(err))
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil || (!env.OK && env.ErrorCode == 0 && env.Description == "") {
		body := provider.Excerpt(raw, 200)
		if resp.StatusCode == http.StatusRequestEntityTooLarge {
			// The front proxy refuses an oversized body before the Bot API sees it.
			return &apiError{Method: method, Status: resp.StatusCode, Code: resp.StatusCode, Description: "Request Entity Too Large"}
		}
		return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, retryAfterHeader(resp.Header),
			"Telegram %s: unexpected answer (HTTP %d): %s", method, resp.StatusCode, body)
	}
	if !env.OK {
		ae := &apiError{Method: method, Status: resp.StatusCode, Code: env.ErrorCode, Description: env.Description}
		if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
			ae.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
		} else {
			ae.RetryAfter = retryAfterHeader(resp.Header)
		}
		if env.Parameters != nil && env.Parameters.MigrateToChatID != 0 {
			ae.Description += fmt.Sprintf(" (the group is now the supergroup %d: reconnect with that chat id)", env.Parameters.MigrateToChatID)
		}
		return ae
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "Telegram %s: unexpected result: %v", method, err)
		}
	}
	return nil
}

func (c client) getMe(ctx context.Context) (User, error) {
	var u User
	err := c.call(ctx, "getMe", url.Values{}, &u)
	return u, err
}

func (c client) getChat(ctx context.Context, chatID string) (Chat, error) {
	var ch Chat
	err := c.call(ctx, "getChat", url.Values{"chat_id": {chatID}}, &ch)
	return ch, err
}

func (c client) getChatMember(ctx context.Context, chatID string, userID int64) (ChatMember, error) {
	var m ChatMember
	err := c.call(ctx, "getChatMember", url.Values{"chat_id": {chatID}, "user_id": {strconv.FormatInt(userID, 10)}}, &m)
	return m, err
}

// upload POSTs f to method through sendonce.Post. A failure is an *apiError (Telegram
// answered: nothing was posted), a *sendonce.SourceError (the media could not be read: the
// body was cut short), a *sendonce.UnknownError, or a *provider.Error for a request that never
// left.
func (c client) upload(ctx context.Context, method string, f sendonce.Form) (message, error) {
	resp, err := sendonce.Post(ctx, c.hc, "Telegram "+method, f, func(ctx context.Context, body io.Reader) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(method), body)
		if err != nil {
			return nil, provider.Permanent(provider.CategoryInternal, 0, "Telegram %s: building the request failed", method)
		}
		return req, nil
	})
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	var msg message
	err = c.decode(resp, method, &msg)
	var ae *apiError
	switch {
	case err == nil:
		return msg, nil
	case errors.As(err, &ae):
		return message{}, err
	}
	// A 2xx or 5xx that is not the Bot API's JSON: a proxy's answer, or a result cut short.
	return message{}, &sendonce.UnknownError{Err: err}
}

func retryAfterHeader(h http.Header) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
