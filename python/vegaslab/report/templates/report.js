(function(){function check(){var imgs=document.images,ok=0,bad=0;
for(var i=0;i<imgs.length;i++){var im=imgs[i];if(im.complete&&im.naturalWidth>0){ok++;}else{bad++;im.classList.add('broken');}}
document.body.setAttribute('data-images-total',imgs.length);document.body.setAttribute('data-images-loaded',ok);
document.body.setAttribute('data-images-broken',bad);document.body.setAttribute('data-report-ready','1');}
if(document.readyState==='complete'){check();}else{window.addEventListener('load',check);}})();
