#!/usr/bin/env python3
"""Tilt of the near-vertical lines of photos, measured with OpenCV alone.

A check of our own tilt measure (engine/imaging/perspective, engine/imaging/quality)
by another implementation: segments from OpenCV's LSD and from probabilistic Hough
on Canny edges; the segments within 20 degrees of vertical and at least 5 % of the
image height long count (architecture, not book spines). Prints, per method, the
length-weighted median and mean of |deviation from vertical| in degrees, and the
mean over the segments within 5 degrees. Each segment is re-fitted to sub-pixel edge
positions first.

usage: tilt_lines.py [--max-side N] PHOTO...
"""
import argparse
import json
import sys

import cv2
import numpy as np

NEAR_VERTICAL_DEG = 20.0
MIN_LENGTH = 0.05  # of the image height
VERTICAL_BAND_DEG = 5.0


def lsd_segments(gray):
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD)
    lines = lsd.detect(gray)[0]
    return np.zeros((0, 4)) if lines is None else lines.reshape(-1, 4)


def hough_segments(gray):
    edges = cv2.Canny(gray, 50, 150, L2gradient=True)
    h = gray.shape[0]
    lines = cv2.HoughLinesP(edges, 1, np.pi / 1800, threshold=40,
                            minLineLength=MIN_LENGTH * h, maxLineGap=3)
    return np.zeros((0, 4)) if lines is None else lines.reshape(-1, 4).astype(float)


def refit(segs, gx):
    """Re-fits each near-vertical segment to sub-pixel edge positions: on every row it
    crosses, the peak of |horizontal gradient| within 2 px of the segment, located by
    a parabola through the three samples around it, then a least-squares line
    x = a*y + b (one round of rejecting rows 1 px off). A detector's end points are good
    to a pixel or so, half a degree on a 50 px segment, more than the tilts measured
    here; pixel edge chains (Canny, Hough) are quantized to whole columns."""
    h, w = gx.shape
    ag = np.abs(gx)
    out = []
    for x0, y0, x1, y1 in segs:
        if abs(x1 - x0) > abs(y1 - y0) * np.tan(np.radians(NEAR_VERTICAL_DEG)):
            out.append((x0, y0, x1, y1))
            continue
        if y0 > y1:
            x0, y0, x1, y1 = x1, y1, x0, y0
        slope = (x1 - x0) / max(y1 - y0, 1e-9)
        ys, xs = [], []
        for j in range(int(np.ceil(y0)) + 1, int(np.floor(y1))):
            if not 0 <= j < h:
                continue
            xc = x0 + slope * (j - y0)
            ic = int(round(xc))
            if ic - 3 < 0 or ic + 3 >= w:
                continue
            prof = ag[j, ic - 2:ic + 3]
            k = int(np.argmax(prof))
            if k == 0 or k == 4 or prof[k] < 4:
                continue
            a, b, c = float(prof[k - 1]), float(prof[k]), float(prof[k + 1])
            den = a - 2 * b + c
            off = 0.5 * (a - c) / den if den < 0 else 0.0
            ys.append(j)
            xs.append(ic - 2 + k + off)
        if len(ys) < max(8, 0.5 * (y1 - y0)):
            out.append((x0, y0, x1, y1))
            continue
        ys, xs = np.array(ys, float), np.array(xs, float)
        a, b = np.polyfit(ys, xs, 1)
        keep = np.abs(xs - (a * ys + b)) <= 1
        if keep.sum() >= 8:
            a, b = np.polyfit(ys[keep], xs[keep], 1)
        out.append((a * y0 + b, y0, a * y1 + b, y1))
    return np.array(out, dtype=np.float64).reshape(-1, 4)


def tilt(segs, height):
    """Length-weighted mean and median of |deviation| (degrees) over the near-vertical
    segments, their count, and the mean over those within VERTICAL_BAND_DEG (after a
    correction, lines further off are not architecture: fan blades, rails seen in
    perspective)."""
    x0, y0, x1, y1 = segs.T if len(segs) else (np.zeros(0),) * 4
    dx, dy = x1 - x0, y1 - y0
    length = np.hypot(dx, dy)
    dev = np.degrees(np.arctan2(np.abs(dx), np.abs(dy)))
    keep = (dev <= NEAR_VERTICAL_DEG) & (length >= MIN_LENGTH * height)
    dev, length = dev[keep], length[keep]
    if len(dev) == 0:
        return {"mean": float("nan"), "median": float("nan"), "n": 0, "mean_band": float("nan")}
    order = np.argsort(dev)
    cum = np.cumsum(length[order])
    median = dev[order][np.searchsorted(cum, cum[-1] / 2)]
    band = dev <= VERTICAL_BAND_DEG
    mean_band = float(np.average(dev[band], weights=length[band])) if band.any() else float("nan")
    return {"mean": float(np.average(dev, weights=length)), "median": float(median),
            "n": int(len(dev)), "mean_band": mean_band}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-side", type=int, default=1600,
                    help="area-reduce so the longer side is at most this (0: full size)")
    ap.add_argument("--json", action="store_true", help="one JSON object per photo")
    ap.add_argument("photos", nargs="+")
    a = ap.parse_args()
    if not a.json:
        print(f"{'photo':36s} | {'LSD: median':>11s} {'mean':>6s} {'mean<=5':>7s} {'n':>3s}"
              f" | {'Hough: median':>13s} {'mean':>6s} {'mean<=5':>7s} {'n':>3s}")
    for p in a.photos:
        img = cv2.imread(p, cv2.IMREAD_GRAYSCALE)
        if img is None:
            sys.exit(f"{p}: cannot read")
        s = max(img.shape)
        if a.max_side > 0 and s > a.max_side:
            f = a.max_side / s
            img = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        h = img.shape[0]
        gx = cv2.Sobel(cv2.GaussianBlur(img.astype(np.float32), (0, 0), 0.7), cv2.CV_32F, 1, 0, ksize=3) / 8
        ls = tilt(refit(lsd_segments(img), gx), h)
        hs = tilt(refit(hough_segments(img), gx), h)
        if a.json:
            print(json.dumps({"photo": p, "lsd": ls, "hough": hs}))
            continue
        name = p if len(p) <= 36 else "..." + p[-33:]
        print(f"{name:36s} | {ls['median']:11.3f} {ls['mean']:6.3f} {ls['mean_band']:7.3f} {ls['n']:3d}"
              f" | {hs['median']:13.3f} {hs['mean']:6.3f} {hs['mean_band']:7.3f} {hs['n']:3d}")


if __name__ == "__main__":
    main()
