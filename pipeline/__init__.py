"""The photo → score pipeline that every shell (CLI, HTTP API, web page, live mode) calls.

Plain stages with typed values between them::

    image ─ vision.detect ─▶ Detections ─ vision.layout ─▶ Layout ─ vision.reading ─▶ Reading
          ─ pipeline.photo.hand_request ─▶ HandRequest ─ pipeline.hand.analyze ─▶ HandAnalysis
    SettleRequest ─ pipeline.hand.settle_table ─▶ SettleResponse;  DrawHand × 2–4 ─ pipeline.hand.chajiao

``pipeline.models`` holds the typed values (they are also the HTTP contract), ``pipeline.errors`` the one
refusal. The pipeline imports ``scoring`` and ``vision``, never ``api``.
"""
