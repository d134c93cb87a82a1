package indexedjob

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildImage builds cachelab's image tarball at out with `make image`'s
// command (deploy/image's build-image, no container daemon) from the
// repository at root, and returns what it printed.
func BuildImage(root, out string) (string, error) {
	cmd := exec.Command("go", "run", "./cmd/build-image", "-root", root, "-o", out)
	cmd.Dir = filepath.Join(root, "deploy", "image")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the image (go run ./cmd/build-image in %s): %v\n%s", cmd.Dir, err, b)
	}
	return strings.TrimSpace(string(b)), nil
}

// LoadImage unpacks the image tarball at path (docker save's format, as
// build-image writes it: manifest.json naming the config and the layers)
// into dir, as a container runtime would before starting a container, and
// returns the image's reference and config. It reads the tarball with the
// standard library only, so this module does not depend on
// go-containerregistry; it accepts regular files and folders and refuses
// anything else (a link, a whiteout) with an error.
func LoadImage(path, dir string) (Image, error) {
	files, err := readTar(path)
	if err != nil {
		return Image{}, err
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		return Image{}, fmt.Errorf("%s: manifest.json: %v", path, err)
	}
	if len(manifest) != 1 || len(manifest[0].RepoTags) != 1 {
		return Image{}, fmt.Errorf("%s: want one image with one tag, found %d images", path, len(manifest))
	}
	m := manifest[0]
	var config struct {
		Config struct {
			Entrypoint, Cmd []string
			WorkingDir      string
		} `json:"config"`
	}
	if err := json.Unmarshal(files[m.Config], &config); err != nil {
		return Image{}, fmt.Errorf("%s: config %s: %v", path, m.Config, err)
	}
	for _, l := range m.Layers {
		b, ok := files[l]
		if !ok {
			return Image{}, fmt.Errorf("%s: layer %s is missing", path, l)
		}
		if err := unpackLayer(bytes.NewReader(b), dir); err != nil {
			return Image{}, fmt.Errorf("%s: layer %s: %v", path, l, err)
		}
	}
	return Image{Ref: m.RepoTags[0], Root: dir, Entrypoint: config.Config.Entrypoint, Cmd: config.Config.Cmd,
		WorkingDir: config.Config.WorkingDir}, nil
}

func readTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = b
	}
}

// unpackLayer writes a layer (a tar, gzipped or not) under dir.
func unpackLayer(r io.ReadSeeker, dir string) error {
	var in io.Reader = r
	if zr, err := gzip.NewReader(r); err == nil {
		in = zr
	} else if _, err := r.Seek(0, io.SeekStart); err != nil {
		return err
	}
	tr := tar.NewReader(in)
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
			if strings.HasPrefix(filepath.Base(p), ".wh.") {
				return fmt.Errorf("whiteout %s: not supported", h.Name)
			}
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
			return fmt.Errorf("entry %s of type %c: not supported", h.Name, h.Typeflag)
		}
	}
}
