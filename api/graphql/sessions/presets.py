"""Presets: a user's named model + settings; viewer.presets lists them, and
createPreset, updatePreset, deletePreset and applyPreset change them or use one."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from ...domain import types as domain
from ...services import presets as preset_service
from ..context import Info
from ..core import ids
from ..core.chat_settings import ChatSettings, ChatSettingsInput
from ..core.errors import MutationError
from .types import Session


@strawberry.type(description="A named model + instructions + parameters of yours.")
class Preset:
    id: strawberry.ID = strawberry.field(description="Its id (for applyPreset).")
    name: str = strawberry.field(description="Its name (unique among yours).")
    model: str = strawberry.field(description='The model, as "provider/model".')
    settings: ChatSettings = strawberry.field(description="The instructions and parameters.")
    created_at: datetime = strawberry.field(description="When it was saved.")
    updated_at: datetime = strawberry.field(description="When it last changed.")

    @classmethod
    def from_domain(cls, preset: domain.Preset) -> Preset:
        return cls(
            id=strawberry.ID(ids.encode("Preset", preset.id)),
            name=preset.name,
            model=preset.model,
            settings=ChatSettings.from_domain(preset.settings),
            created_at=preset.created_at,
            updated_at=preset.updated_at,
        )


@strawberry.type(description="A reason `createPreset` did not succeed.")
class CreatePresetError(MutationError):
    pass


@strawberry.type(description="A reason `updatePreset` did not succeed.")
class UpdatePresetError(MutationError):
    pass


@strawberry.type(description="A reason `deletePreset` did not succeed.")
class DeletePresetError(MutationError):
    pass


@strawberry.type(description="A reason `applyPreset` did not succeed.")
class ApplyPresetError(MutationError):
    pass


@strawberry.input(description="A new preset of yours.")
class CreatePresetInput:
    name: str = strawberry.field(description="Its name (1 to 100 characters, unique among yours).")
    model: str = strawberry.field(description='The model, as "provider/model".')
    settings: ChatSettingsInput = strawberry.field(
        description="The instructions and parameters (maxOutputTokens within the model's limit)."
    )


@strawberry.input(description="New values for a preset; omitted fields stay as they are.")
class UpdatePresetInput:
    id: strawberry.ID = strawberry.field(description="The preset.")
    name: str | None = strawberry.field(default=None, description="A new name.")
    model: str | None = strawberry.field(default=None, description="A new model.")
    settings: ChatSettingsInput | None = strawberry.field(
        default=None, description="New settings, replacing the preset's whole."
    )


@strawberry.input(description="The preset to delete.")
class DeletePresetInput:
    id: strawberry.ID = strawberry.field(description="The preset.")


@strawberry.input(description="A preset for a session.")
class ApplyPresetInput:
    session_id: strawberry.ID = strawberry.field(description="Your session.")
    preset_id: strawberry.ID = strawberry.field(description="Your preset.")


@strawberry.type(description="The result of createPreset.")
class CreatePresetPayload:
    preset: Preset | None = strawberry.field(description="The new preset.")
    errors: list[CreatePresetError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of updatePreset.")
class UpdatePresetPayload:
    preset: Preset | None = strawberry.field(description="The preset as it is now.")
    errors: list[UpdatePresetError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of deletePreset.")
class DeletePresetPayload:
    deleted_id: strawberry.ID | None = strawberry.field(description="The id that was deleted.")
    errors: list[DeletePresetError] = strawberry.field(description="Why it failed, if it did.")


@strawberry.type(description="The result of applyPreset.")
class ApplyPresetPayload:
    session: Session | None = strawberry.field(
        description="The session with the preset's model and settings."
    )
    errors: list[ApplyPresetError] = strawberry.field(description="Why it failed, if it did.")


def _preset_id(value: str, field: str = "id") -> int:
    return ids.decode(value, "Preset", field=field)


@strawberry.type
class PresetMutation:
    @strawberry.mutation(description="Save a named model + instructions + parameters.")
    async def create_preset(
        self,
        info: Info,
        input: Annotated[
            CreatePresetInput, strawberry.argument(description="The createPreset arguments.")
        ],
    ) -> CreatePresetPayload:
        preset = await preset_service.create_preset(
            info.context.services,
            info.context.actor,
            name=input.name,
            model=input.model,
            settings=input.settings.to_domain(),
        )
        return CreatePresetPayload(preset=Preset.from_domain(preset), errors=[])

    @strawberry.mutation(description="Rename a preset of yours, or change its model or settings.")
    async def update_preset(
        self,
        info: Info,
        input: Annotated[
            UpdatePresetInput, strawberry.argument(description="The updatePreset arguments.")
        ],
    ) -> UpdatePresetPayload:
        preset = await preset_service.update_preset(
            info.context.services,
            info.context.actor,
            _preset_id(input.id),
            name=input.name,
            model=input.model,
            settings=input.settings.to_domain() if input.settings is not None else None,
        )
        return UpdatePresetPayload(preset=Preset.from_domain(preset), errors=[])

    @strawberry.mutation(description="Delete a preset of yours.")
    async def delete_preset(
        self,
        info: Info,
        input: Annotated[
            DeletePresetInput, strawberry.argument(description="The deletePreset arguments.")
        ],
    ) -> DeletePresetPayload:
        await preset_service.delete_preset(info.context.actor, _preset_id(input.id))
        return DeletePresetPayload(deleted_id=input.id, errors=[])

    @strawberry.mutation(
        description="Give your session a preset's model and settings (its own settings are "
        "replaced whole; what the preset leaves unset comes from the space)."
    )
    async def apply_preset(
        self,
        info: Info,
        input: Annotated[
            ApplyPresetInput, strawberry.argument(description="The applyPreset arguments.")
        ],
    ) -> ApplyPresetPayload:
        session = await preset_service.apply_preset(
            info.context.services,
            info.context.actor,
            ids.decode(input.session_id, "Session", field="sessionId"),
            _preset_id(input.preset_id, "presetId"),
        )
        return ApplyPresetPayload(session=Session.from_domain(session), errors=[])
