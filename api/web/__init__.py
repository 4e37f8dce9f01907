"""The web page (static ES modules, served by the HTTP service) and its CJK webfont tool (``webfont``)."""
