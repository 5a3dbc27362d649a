// Command solve: run it with -h for what it does and its flags.
package main

import (
	"os"

	"github.com/reversi-cloud/reversi/cli"
)

func main() { os.Exit(cli.Solve(cli.OSEnv())) }
