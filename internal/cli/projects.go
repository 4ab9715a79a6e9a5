package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

// listProjectsAPI is `reelay projects list` without --account: the key's account's projects.
func listProjectsAPI(cmd *cobra.Command, a *apiFlags) error {
	c, err := a.client(cmd)
	if err != nil {
		return err
	}
	projects, err := c.ListProjects(cmd.Context())
	if err != nil {
		return err
	}
	return printProjects(cmd.OutOrStdout(), a.json, projects)
}

// createProjectAPI is `reelay projects create` without --account.
func createProjectAPI(cmd *cobra.Command, a *apiFlags, name, description string) error {
	c, err := a.client(cmd)
	if err != nil {
		return err
	}
	p, err := c.CreateProject(cmd.Context(), client.CreateProjectRequest{Name: name, Description: description})
	if err != nil {
		return err
	}
	if a.json {
		return printJSON(cmd.OutOrStdout(), p)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "project %s (%s)\n", p.ID, p.Name)
	return nil
}

// printProjects prints projects as {"projects":[...]} (the API's listing) or a table.
func printProjects(w io.Writer, asJSON bool, projects []client.Project) error {
	if asJSON {
		if projects == nil {
			projects = []client.Project{}
		}
		return printJSON(w, map[string]any{"projects": projects})
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tDESCRIPTION")
	for _, p := range projects {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.ID, p.Name, timeCell(&p.CreatedAt), dash(p.Description))
	}
	return tw.Flush()
}
