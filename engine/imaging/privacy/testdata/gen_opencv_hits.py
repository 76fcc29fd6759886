#!/usr/bin/env python3
"""Regenerates opencv_hits.txt, the reference the cascade evaluator is checked against.

Input: a PGM written by TestOpenCVHits with -write-pgm (the grey image the Go code
scans). For each model below, the first STAGES stages are kept and OpenCV's
detectMultiScale is run at the model's own window size only (minSize = maxSize), with
minNeighbors 0 so the raw windows come back ungrouped. Needs python3-opencv.

    go test ./engine/imaging/privacy -run TestOpenCVHits -write-pgm /tmp/g.pgm
    /usr/bin/python3 gen_opencv_hits.py /tmp/g.pgm > opencv_hits.txt
"""
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

import cv2

STAGES = 6
MODELS = [
    "haarcascades/haarcascade_frontalface_alt2.xml",
    "haarcascades/haarcascade_frontalface_default.xml",
    "haarcascades/haarcascade_profileface.xml",
    "haarcascades/haarcascade_russian_plate_number.xml",
    "haarcascades/haarcascade_licence_plate_rus_16stages.xml",
    "haarcascades/haarcascade_upperbody.xml",
    "lbpcascades/lbpcascade_frontalface_improved.xml",
    "lbpcascades/lbpcascade_profileface.xml",
]


def truncated(path):
    s = open(path, encoding="latin-1").read()
    s = re.sub(r"<!--.*?-->", "", s, flags=re.S)
    s = s.split("?>", 1)[1] if s.startswith("<?xml") else s
    root = ET.fromstring(s)
    casc = root[0]
    stages = casc.find("stages")
    for st in list(stages)[STAGES:]:
        stages.remove(st)
    if casc.find("stageNum") is not None:
        casc.find("stageNum").text = str(STAGES)
    f = tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False)
    f.write('<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode"))
    f.close()
    return f.name


def main():
    g = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
    print("# OpenCV %s, first %d stages, raw windows at the model's window size" % (cv2.__version__, STAGES))
    for m in MODELS:
        c = cv2.CascadeClassifier(truncated("/usr/share/opencv4/" + m))
        ws = c.getOriginalWindowSize()
        r = c.detectMultiScale(g, scaleFactor=1.1, minNeighbors=0, minSize=ws, maxSize=ws)
        pts = sorted((int(x), int(y)) for (x, y, w, h) in (r if len(r) else []))
        print(m.split("/")[-1][:-4], " ".join("%d,%d" % p for p in pts))


main()
