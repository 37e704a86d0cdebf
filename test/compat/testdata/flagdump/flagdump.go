// This file is not built with this module: make update-compat-fixtures
// compiles it into a copy of the upstream csi-provisioner's main package
// (built with test/tools/upstream's go.mod), so that its --help prints the
// flag set as upstream's main builds it, one flag a line: name, pflag's
// Value.Type() and DefValue, tab-separated. Upstream's own --help does not
// show the type exactly: it prints a back-quoted word of the usage instead,
// and nothing for booleans. TestUpdateFixtures writes the fixture from it.
package main

import (
	"fmt"
	"os"

	flag "github.com/spf13/pflag"
)

func init() {
	flag.Usage = func() {
		flag.VisitAll(func(f *flag.Flag) { fmt.Printf("%s\t%s\t%s\n", f.Name, f.Value.Type(), f.DefValue) })
		os.Exit(0)
	}
}
