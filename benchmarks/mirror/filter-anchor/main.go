// The anchor of the filter benchmark: oc-mirror v2's operator selection, as oc-mirror runs it - the catalog-filter
// library's mirror filter over a catalog loaded with operator-registry's declcfg, written back with declcfg.WriteFS.
//
//	filter-anchor CATALOG_DIR FILTER_CONFIG_JSON OUT_DIR
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	mirror "github.com/sherine-k/catalog-filter/pkg/filter/mirror-config/v1alpha1"
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: filter-anchor CATALOG_DIR FILTER_CONFIG_JSON OUT_DIR")
		os.Exit(2)
	}
	ctx := context.Background()
	data, err := os.ReadFile(os.Args[2])
	check(err)
	var config mirror.FilterConfiguration
	check(json.Unmarshal(data, &config))
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(os.Args[1]))
	check(err)
	out, err := mirror.NewMirrorFilter(config).FilterCatalog(ctx, cfg)
	check(err)
	check(declcfg.WriteFS(*out, os.Args[3], declcfg.WriteJSON, ".json"))
}
