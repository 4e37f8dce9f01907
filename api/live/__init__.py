"""Live mode: a camera or video read frame by frame, with a vote over readings (``loop.live``)."""
