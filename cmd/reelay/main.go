// Command reelay publishes short vertical video to twelve social platforms through one HTTP
// API. `reelay serve` runs the service; the other commands administer it or call it.
package main

import (
	"os"

	"github.com/reelay/reelay/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
