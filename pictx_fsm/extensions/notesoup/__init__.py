"""notesoup 0.38 (the renamed, grown pi-context; spec ``../shared/spec/notesoup.md``) as a
third extension: a reducer with four request phases, ``/clear-memory`` closing out before it
commits at settle, a hard reserve that latches a stop, an empty native compaction before
every marker, typed notes and history tools — and the migration of pi-context 0.25 sessions
and notes the reference lacks. What it shares with pi-context lives in
:mod:`pictx_fsm.extensions.shared`.
"""

__all__: list[str] = []
