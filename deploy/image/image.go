// Package image builds cachelab's container image with no container daemon:
// go-containerregistry assembles it from a statically linked cachelab binary
// on an empty (scratch) base, as ko or crane would, and writes it as a
// tarball that `docker load`, `podman load` or `crane push` take.
//
// It is a module of its own (deploy/image) so that go-containerregistry stays
// out of the lab's main module.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identity inside the image, as deploy/*.yaml expect them.
const (
	// Binary is where the cachelab binary lives in the image.
	Binary = "/usr/local/bin/cachelab"
	// WorkDir is the working folder: the Jobs mount their results volume
	// there.
	WorkDir = "/results"
	// User is the non-root user the image runs as (the Jobs' fsGroup).
	User = "65532:65532"
	// Tag is the image's default name, the one deploy/*.yaml run.
	Tag = "cachelab:dev"
)

// BuildBinary compiles cachelab statically (CGO_ENABLED=0, -trimpath) from
// the repository at root into out.
func BuildBinary(root, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/cachelab")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/cachelab: %v\n%s", err, b)
	}
	return nil
}

// Build returns the image: one layer holding the binary at Binary and an
// empty WorkDir owned by User, on an empty base; the entrypoint is the
// binary. The layer's timestamps are fixed, so the same binary gives the
// same image digest.
func Build(binary string) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	for _, d := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: WorkDir[1:] + "/", Mode: 0o775, Uid: 65532, Gid: 65532, ModTime: epoch}); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: Binary[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: epoch}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{Binary}
	cf.Config.WorkingDir = WorkDir
	cf.Config.User = User
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": "cachelab"}
	return mutate.ConfigFile(img, cf)
}

// Write writes img as a tarball named tag at path.
func Write(path, tag string, img v1.Image) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}

// Extract unpacks img's filesystem under dir, as a container runtime would
// before starting it.
func Extract(img v1.Image, dir string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected entry %s (type %c) in the image", h.Name, h.Typeflag)
		}
	}
}
