#!/usr/bin/python3
"""Writes the PIL references of tests/cpu/test_image_folder.cpp (ImageTransform.MatchesPilBitForBit).

torchvision's ImageNet transforms on PIL images come down to PIL's decode,
convert("RGB"), crop and bilinear resize. For three small JPEGs made here
(RGB 4:2:0, PIL's own subsampled CMYK, grayscale) this writes, as raw
(h, w, 3) uint8:
  NAME.jpg          the JPEG
  NAME.decoded.rgb  Image.open(NAME.jpg).convert("RGB")
  NAME.eval.rgb     Resize(40) + CenterCrop(32), as torchvision computes the sizes
  NAME.box.rgb      crop(BOXES[NAME]).resize((32, 32), BILINEAR): RandomResizedCrop with its draw given
Run with Debian's python3-pil (9.4, on libjpeg-turbo 2.1.5):
  /usr/bin/python3 tests/data/image_folder/make_pil_reference.py
"""
import math
import os
import random

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
# (top, left, height, width) for each image; the test uses the same.
BOXES = {"photo": (7, 11, 61, 83), "cmyk": (3, 20, 40, 29), "gray": (30, 2, 33, 45)}


def photo(w, h, seed):
    rnd = random.Random(seed)
    img = Image.new("RGB", (w, h))
    px = img.load()
    fx, fy = rnd.uniform(0.02, 0.1), rnd.uniform(0.02, 0.1)
    for y in range(h):
        for x in range(w):
            px[x, y] = tuple(
                int(128 + 60 * math.sin(fx * x * (c + 1) + fy * y) + 40 * math.cos(0.01 * x * y / (c + 1))
                    + rnd.uniform(-12, 12))
                for c in range(3))
    return img


def main():
    made = {
        "photo": (photo(120, 90, 1), dict(quality=90, subsampling=2)),
        "cmyk": (photo(64, 48, 2).convert("CMYK"), dict(quality=90, subsampling=2)),
        "gray": (photo(50, 70, 3).convert("L"), dict(quality=85)),
    }
    for name, (img, opts) in made.items():
        path = os.path.join(HERE, name + ".jpg")
        img.save(path, "JPEG", **opts)
        rgb = Image.open(path).convert("RGB")
        w, h = rgb.size
        with open(os.path.join(HERE, name + ".decoded.rgb"), "wb") as f:
            f.write(rgb.tobytes())
        # torchvision's Resize(40): the shorter side to 40, the longer int(40 * long / short).
        nw, nh = (40, int(40 * h / w)) if w <= h else (int(40 * w / h), 40)
        top, left = int(round((nh - 32) / 2.0)), int(round((nw - 32) / 2.0))
        ev = rgb.resize((nw, nh), Image.BILINEAR).crop((left, top, left + 32, top + 32))
        with open(os.path.join(HERE, name + ".eval.rgb"), "wb") as f:
            f.write(ev.tobytes())
        t, l, bh, bw = BOXES[name]
        bx = rgb.crop((l, t, l + bw, t + bh)).resize((32, 32), Image.BILINEAR)
        with open(os.path.join(HERE, name + ".box.rgb"), "wb") as f:
            f.write(bx.tobytes())
        print(name, rgb.size, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
