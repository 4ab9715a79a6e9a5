// Package inbox keeps the comments on published items: it reads them from each platform into
// the database (deduplicated by the platform's id) and posts replies on the origin platform.
package inbox
