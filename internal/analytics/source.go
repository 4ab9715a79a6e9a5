// Package analytics keeps the figures of published items: it asks each platform for them
// (Syncer), stores them per destination as a time series with nullable columns, and answers
// totals and breakdowns from what is stored.
package analytics
