// ggcr_registry.go: go-containerregistry's registry (pkg/registry, what
// `crane registry serve` runs) with its OCI 1.1 referrers API turned on,
// in memory, on a free loopback port; prints "serving on ADDR:PORT".
// Built by ggcr-setup.sh from Debian's go-containerregistry sources.
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("serving on %s\n", ln.Addr())
	os.Stdout.Sync()
	log.Fatal(http.Serve(ln, registry.New(registry.WithReferrersSupport(true))))
}
