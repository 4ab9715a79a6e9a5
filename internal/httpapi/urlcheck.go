package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
)

// credentialParams are query parameter names under which clients commonly put credentials,
// lower case without "-" and "_": names are compared that way (credentialParam), so API_KEY,
// Api-Key and apiKey are all caught. Keys in URLs end up in proxy logs and browser history, so
// they are refused, not ignored. The parameters the API does take in URLs are not among them:
// a media link's exp and sig, an OAuth callback's code and state.
var credentialParams = []string{"apikey", "key", "accesstoken", "token", "xapikey", "authorization", "bearer", "authtoken"}

func credentialParam(name string) bool {
	n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(name))
	for _, c := range credentialParams {
		if n == c {
			return true
		}
	}
	return false
}

// CheckQuery refuses a request URL whose query carries a credential (400 credentials_in_url,
// whatever the case of its name) or text that is not UTF-8 or not validly percent-encoded
// (400 naming the parameter): url.Values would drop a malformed pair without a word and keep
// bytes that are not UTF-8 as they are. The dashboard checks its URLs with it too.
func CheckQuery(r *http.Request) error {
	raw := r.URL.RawQuery
	if raw == "" {
		return nil
	}
	// Credentials first, over every pair, however malformed the rest: a key in the URL must be
	// reported as such, not as a bad escape next to it.
	pairs := strings.FieldsFunc(raw, func(c rune) bool { return c == '&' || c == ';' })
	for _, pair := range pairs {
		name, _, _ := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if credentialParam(name) {
			return apierr.Newf(http.StatusBadRequest, apierr.CodeCredentialsInURL,
				"credentials must not be sent in the URL (query parameter %q); use the X-API-Key or Authorization header, and revoke a key that was exposed", name)
		}
	}
	for _, pair := range pairs {
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			return apierr.Field("query", "has a parameter name that is not validly percent-encoded: "+err.Error())
		}
		if !utf8.ValidString(name) {
			return apierr.Field("query", "has a parameter name that is not valid UTF-8")
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return apierr.Field(name, "is not validly percent-encoded: "+err.Error())
		}
		if !utf8.ValidString(value) {
			return apierr.Field(name, "is not valid UTF-8; percent-encode the text's UTF-8 bytes")
		}
	}
	return nil
}

// checkURLs applies CheckQuery to every request under the API's prefix, public endpoints and
// the agent-tool endpoint included, before routing. The simulated platforms under /sandbox/
// take what their real counterparts take (some want access_token in the query).
func (s *Server) checkURLs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == APIPrefix || strings.HasPrefix(p, APIPrefix+"/") {
			if err := CheckQuery(r); err != nil {
				writeError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
