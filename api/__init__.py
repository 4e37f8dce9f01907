"""The programs people use: the ``zhuoji`` CLI, the HTTP service and its web page, live table mode."""

# A last line against decompression bombs: OpenCV reads its pixel cap once, when its codecs load, and
# vision.images sets it (to its MAX_PIXELS) before importing cv2; importing it first keeps that order for api/.
import vision.images  # noqa: F401
