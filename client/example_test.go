package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/reelay/reelay/client"
)

func ExampleClient_Publish() {
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("REELAY_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	f, err := os.Open("clip.mp4")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	res, err := c.Publish(ctx, client.PublishRequest{
		ProjectID: "<project id>",
		Title:     "Launch day",
		Caption:   "We shipped #launch",
		Platforms: []client.Platform{client.YouTube, client.TikTok},
		TikTok:    &client.TikTokOptions{Mode: "direct"},
		Video:     &client.Upload{Reader: f, Name: "clip.mp4"},
		Progress:  func(sent, total int64) { fmt.Fprintf(os.Stderr, "\r%d of %d bytes", sent, total) },
	})
	if e, ok := client.AsError(err); ok && e.Code == client.CodeValidationFailed {
		for field, problem := range e.Fields {
			fmt.Printf("%s: %s\n", field, problem)
		}
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	post, err := c.WaitPost(ctx, res.PostID)
	if err != nil {
		log.Fatalf("post %s: outcome unknown (%v); do not publish it again", res.PostID, err)
	}
	for _, d := range post.PublishResults {
		fmt.Println(d.Platform, d.UploadStatus, d.URL, d.Error)
	}
}

func ExampleClient_AllPosts() {
	c, err := client.New("http://127.0.0.1:8080", os.Getenv("REELAY_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
	for post, err := range c.AllPosts(context.Background(), client.ListPostsParams{Status: client.PostFailed}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(post.ID, post.Title)
	}
}
