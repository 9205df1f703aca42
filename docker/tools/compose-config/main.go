// Command compose-config loads a Compose file as `docker compose config` does, through the
// compose-go library that docker compose itself is built on: the file is checked against the
// Compose Specification's schema, its variables are interpolated, the references between
// services, volumes and networks are resolved, and the resulting model is printed as YAML (or
// nothing, with -q). bin/setup builds it so that the deployment checks need neither a container
// engine nor the docker compose plugin, which a Docker client alone does not carry.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	file := flag.String("f", "compose.yaml", "the Compose file")
	quiet := flag.Bool("q", false, "only check the file; print nothing when it is valid")
	flag.Parse()
	options, err := cli.NewProjectOptions([]string{*file}, cli.WithOsEnv, cli.WithDotEnv,
		cli.WithConfigFileEnv)
	if err != nil {
		fail(err)
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		fail(err)
	}
	if *quiet {
		return
	}
	out, err := project.MarshalYAML()
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
