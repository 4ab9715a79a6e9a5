// Package publish turns a publish request into posts and destinations and carries each
// destination to its platform through that platform's Provider, step by step, on the job
// queue.
package publish
