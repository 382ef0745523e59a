"""The journal and its model: ``journal`` writes ``runs/events.ndjson`` and the snapshots,
``journal_replay`` reads them back; ``model`` the state and its one reducer (``model_controls``
the owner's controls), ``records`` sessions and jobs in it, ``views`` what callers see."""
