package instagramsim

import (
	"slices"

	"github.com/reelay/reelay/internal/platform/sim"
)

// igPermissions are the permissions a sandbox consent asks for (Instagram API with Facebook
// Login): what GET /me/permissions lists.
var igPermissions = []string{"instagram_basic", "instagram_content_publish", "instagram_manage_comments",
	"instagram_manage_insights", "pages_show_list", "pages_read_engagement"}

// permissions is GET /me/permissions: each permission the user was asked for, with status
// granted or declined, in data
// (https://developers.facebook.com/docs/graph-api/reference/user/permissions/).
func (s *igSim) permissions(acct sim.Account) any {
	data := make([]map[string]string, 0, len(igPermissions))
	for _, p := range igPermissions {
		status := "granted"
		if slices.Contains(s.opt.Declined[acct.ID], p) {
			status = "declined"
		}
		data = append(data, map[string]string{"permission": p, "status": status})
	}
	return map[string]any{"data": data}
}
