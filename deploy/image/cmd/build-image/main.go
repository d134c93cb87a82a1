// Command build-image builds cachelab's container image without a container
// daemon and writes it as a tarball (default out/cachelab-image.tar, tagged
// cachelab:dev) for `docker load`, `podman load` or `crane push`. Run it
// from the repository's root: go run ./deploy/image/cmd/build-image (or
// make image).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cachelab/cachelab/deploy/image"
)

func main() {
	root := flag.String("root", ".", "the cachelab repository's root")
	out := flag.String("o", "out/cachelab-image.tar", "the image tarball to write")
	tag := flag.String("tag", image.Tag, "the image's name")
	flag.Parse()
	if err := run(*root, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

func run(root, out, tag string) error {
	tmp, err := os.MkdirTemp("", "cachelab-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "cachelab")
	if err := image.BuildBinary(root, bin); err != nil {
		return err
	}
	img, err := image.Build(bin)
	if err != nil {
		return err
	}
	if err := image.Write(out, tag, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (%s, %s): docker load -i %s, or crane push %s REGISTRY/cachelab:TAG\n", out, tag, d, out, out)
	return nil
}
